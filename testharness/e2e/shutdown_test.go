package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// With a task still running (and the plugin's poll timer armed), SIGTERM ends `opencode serve`
// as it would without the plugin: the plugin installs no signal handler and no timer of its keeps
// the process alive. (The earlier plugin's handlers left the server running after SIGTERM.)
func TestSIGTERMExitsWithTasksRunning(t *testing.T) {
	e := start(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD forever":
			return mockmodel.Reply{Text: "too late", Delay: 5 * time.Minute}
		case lastRole(req) == "tool":
			return mockmodel.Reply{Text: "waiting"}
		case req.LastUser == "GO":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Endless job", "CHILD forever", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	})
	parent := e.prompt("GO")
	e.eventually("the task to be running", 60*time.Second, func() bool {
		parts := e.toolParts(parent, "asyncagents_task")
		return finishedParts(parts) && strings.Contains(parts[0].State.Output, "status: running")
	})
	require.NoError(t, e.oc.Stop(), "opencode must exit on SIGTERM within %s", ocserve.StopGrace)
	select {
	case <-e.oc.Exited():
	default:
		t.Fatal("opencode still running after Stop")
	}
}
