package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// The build agent's own permission.task rules (OpenCode's config shape for its task tool) decide
// which subagents it may launch in the background: general is refused, with the allowed list,
// and nothing is created; explore, allowed by the last matching rule, runs.
func TestAllowListFromPermissionTask(t *testing.T) {
	model := mockmodel.Start(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD allowed":
			return mockmodel.Reply{Text: "explored"}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "GO":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{
				taskCall("Denied", "CHILD denied", "general"),
				taskCall("Allowed", "CHILD allowed", "explore"),
			}}
		}
		return mockmodel.Reply{Text: "?"}
	})
	oc := ocserve.Start(t, ocserve.Options{ModelURL: model.URL(), Plugins: []string{ocserve.PluginSpec(t)}, Config: map[string]any{
		"agent": map[string]any{"build": map[string]any{"permission": map[string]any{"task": map[string]any{"*": "deny", "explore": "allow"}}}},
	}})
	e := &env{t: t, model: model, oc: oc}
	parent := e.prompt("GO")
	e.eventually("the allowed task's notice", 90*time.Second, func() bool { return len(e.notices(parent)) == 1 })
	parts := e.toolParts(parent, "asyncagents_task")
	require.Len(t, parts, 2)
	require.Equal(t, "error", parts[0].State.Status)
	require.Contains(t, parts[0].State.Error, `asyncagents_task: agent "build" may not launch agent "general"`)
	require.Contains(t, parts[0].State.Error, "agents it may launch: explore. No task was created.")
	require.Equal(t, "completed", parts[1].State.Status, parts[1].State.Error)
	n := e.notices(parent)[0]
	require.Contains(t, n.visible, `"Allowed" finished`)
	require.Contains(t, n.hidden, "explored")
	children, err := e.oc.Children(e.ctx(10*time.Second), parent)
	require.NoError(t, err)
	require.Len(t, children, 1, "the refused launch created no session")
}
