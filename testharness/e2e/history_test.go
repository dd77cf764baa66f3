package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// OpenCode stops (SIGTERM) with one task finished and one running, and starts again on the same
// data: the finished task's result is still there for asyncagents_output and asyncagents_list,
// and the running one is reconciled as interrupted, with its parent told.
func TestHistorySurvivesRestart(t *testing.T) {
	var ids []string
	script := func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD done":
			return mockmodel.Reply{Text: "result before the restart"}
		case req.LastUser == "CHILD hang":
			return mockmodel.Reply{Text: "never", Delay: 5 * time.Minute}
		case strings.HasPrefix(req.LastUser, "COLLECT") && lastRole(req) == "user":
			var calls []mockmodel.ToolCall
			for _, id := range ids {
				calls = append(calls, mockmodel.ToolCall{Name: "asyncagents_output", Args: map[string]any{"task_id": id}})
			}
			return mockmodel.Reply{ToolCalls: append(calls, mockmodel.ToolCall{Name: "asyncagents_list", Args: map[string]any{}})}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "**Agent"):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "TWO":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Done job", "CHILD done", "general"), taskCall("Hung job", "CHILD hang", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	}
	e := start(t, script)
	parent := e.prompt("TWO")
	e.eventually("the first notice", 60*time.Second, func() bool { return len(e.notices(parent)) == 1 })
	for _, p := range e.toolParts(parent, "asyncagents_task") {
		ids = append(ids, idOf(p))
	}
	require.Len(t, ids, 2)

	// Restart: a new opencode serve on the same home and project.
	e.oc = ocserve.Restart(t, e.oc, ocserve.Options{ModelURL: e.model.URL(), Plugins: []string{ocserve.PluginSpec(t)}})
	// The plugin loads on the first request; it reconciles the hung task and tells the parent.
	e.eventually("the interrupted task's notice", 60*time.Second, func() bool { return len(e.notices(parent)) == 2 })
	n := e.notices(parent)[1]
	require.Regexp(t, `^✗ \*\*Agent "Hung job" failed in `, n.visible)
	require.Contains(t, n.hidden, "interrupted: OpenCode stopped while the task ran")
	e.waitIdle(parent)

	e.promptIn(parent, "COLLECT")
	e.eventually("the outputs", 60*time.Second, func() bool {
		return len(e.toolParts(parent, "asyncagents_output")) == 2 && finishedParts(e.toolParts(parent, "asyncagents_output")) &&
			finishedParts(e.toolParts(parent, "asyncagents_list"))
	})
	outs := e.toolParts(parent, "asyncagents_output")
	require.Contains(t, outs[0].State.Output, "status: completed")
	require.Contains(t, outs[0].State.Output, "<task_result>\nresult before the restart\n</task_result>")
	require.Contains(t, outs[1].State.Output, "status: error")
	require.Contains(t, outs[1].State.Output, "interrupted")
	list := e.toolParts(parent, "asyncagents_list")[0].State.Output
	require.Contains(t, list, "- "+ids[0]+" | completed |")
	require.Contains(t, list, "- "+ids[1]+" | error |")
}
