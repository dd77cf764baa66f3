package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// A batch of three shows one toast in OpenCode's TUI when its last task ends, none before: the
// plugin's toast reaches OpenCode's bus as tui.toast.show.
func TestOneToastForABatch(t *testing.T) {
	e := start(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD 1":
			return mockmodel.Reply{Text: "one"}
		case req.LastUser == "CHILD 2":
			return mockmodel.Reply{Text: "two", Delay: 1500 * time.Millisecond}
		case req.LastUser == "CHILD 3":
			return mockmodel.Reply{Text: "three", Delay: 3 * time.Second}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "GO":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("One", "CHILD 1", "general"), taskCall("Two", "CHILD 2", "general"), taskCall("Three", "CHILD 3", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	})
	events := e.oc.Record(t)
	parent := e.prompt("GO")
	e.eventually("the batch's notices", 90*time.Second, func() bool { return len(e.notices(parent)) == 3 })
	toast, err := events.Wait(e.ctx(30*time.Second), ocserve.Is("tui.toast.show", ""))
	require.NoError(t, err)
	var body struct {
		Title, Message, Variant string
	}
	require.NoError(t, json.Unmarshal(toast.Properties, &body))
	require.Equal(t, "3 background tasks done", body.Title)
	require.Equal(t, "3 completed", body.Message)
	require.Equal(t, "success", body.Variant)
	// The parent's answer to the notice comes after the toast: by then a second toast would be in.
	e.waitIdle(parent)
	require.Len(t, events.Filter(ocserve.Is("tui.toast.show", "")), 1, "one toast for the batch, none per task")
}
