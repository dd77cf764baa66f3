package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
)

// While a task runs, asyncagents_output shows its progress from the child's tool parts: the
// tool call count and the last tools. With NODE_ENV=development, notices end with [hint attached].
func TestProgressWhileRunning(t *testing.T) {
	var taskID, session string
	e := start(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD work" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "bash", Args: map[string]any{"command": "echo step", "description": "one step"}}}}
		case req.LastUser == "CHILD work":
			return mockmodel.Reply{Text: "worked", Delay: 4 * time.Second} // after its tool call, a slow answer
		case req.LastUser == "PEEK" && lastRole(req) == "user":
			// By either ID: the task's own and its child session's answer alike.
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{
				{Name: "asyncagents_output", Args: map[string]any{"task_id": taskID}},
				{Name: "asyncagents_output", Args: map[string]any{"task_id": session}},
			}}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "GO":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Worker", "CHILD work", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	}, "NODE_ENV=development")
	parent := e.prompt("GO")
	e.eventually("the launch", 60*time.Second, func() bool { return finishedParts(e.toolParts(parent, "asyncagents_task")) })
	taskID = idOf(e.toolParts(parent, "asyncagents_task")[0])
	session = e.sessionOf(taskID)
	e.eventually("the child's tool call done", 60*time.Second, func() bool {
		for _, m := range e.messages(session) {
			for _, p := range m.Parts {
				if p.Type == "tool" && p.State.Status == "completed" {
					return true
				}
			}
		}
		return false
	})
	e.waitIdle(parent)
	e.promptIn(parent, "PEEK")
	e.eventually("the output calls", 30*time.Second, func() bool {
		parts := e.toolParts(parent, "asyncagents_output")
		return len(parts) == 2 && finishedParts(parts)
	})
	for _, p := range e.toolParts(parent, "asyncagents_output") {
		out := p.State.Output
		require.Contains(t, out, "task_id: "+taskID+"\nsession_id: "+session+"\n", "asked by %s", p.State.Input["task_id"])
		require.Contains(t, out, "status: running\n")
		require.Contains(t, out, "progress: 1 tool calls; last tools: bash; last activity ")
	}

	e.eventually("the notice", 60*time.Second, func() bool { return len(e.notices(parent)) == 1 })
	require.Regexp(t, `^✓ Agent "Worker" finished in [0-9.]+m?s\.\nTask Progress: 1/1\n\[hint attached\]$`, e.notices(parent)[0].visible)
}
