package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
)

// A child on a polled worker runs a subagent of its own (OpenCode's task tool), which works for
// a while: no stream tells the parent of it, yet its model call counts toward the task, as a
// followed worker's subagent's does. The child's task part names the subagent's session; its
// messages are read there, the task's usage marks name it, and the task's steps hold its call.
func TestAPolledChildsSubagentSpendsForItsTask(t *testing.T) {
	script := func(req mockmodel.Request) mockmodel.Reply {
		if firstUser(req) == "SUB spends" && lastRole(req) == "user" {
			return mockmodel.Reply{Text: "sub done", Delay: 6 * time.Second} // across a progress read
		}
		return leadOnW1(req, "SUB spends", func() {})
	}
	f := startFleet(t, script, fleetOptions{workers: 1,
		worker: map[string]any{"pollMs": 500},
		workerConfig: map[string]any{
			"subagent_depth": 3,
			"agent": map[string]any{
				"orchestrator": map[string]any{"mode": "subagent", "description": "splits work", "permission": map[string]any{"task": "allow"}},
			}}})
	f.waitWorkersUp()
	parent := f.prompt("GO")
	id := f.launchedTasks(parent, 1)[0]
	f.eventually("the task's notice", 120*time.Second, func() bool { return f.noticeOf(parent, id) != "" })
	f.waitIdle(parent)

	tk := storedTask(t, f.oc, id)
	require.Equal(t, task.StatusCompleted, tk.Status, "%+v", tk.Error)
	require.Contains(t, tk.Result, "sub done")
	require.Equal(t, "w1", f.placeOf(id))
	sub := subagentMarks(tk)
	require.Len(t, sub, 1, "the subagent's call counted for the task: %+v", tk.UsageMarks)
	require.NotEmpty(t, sub[0].Message, "its message")
	require.NotEmpty(t, sub[0].Step, "and its step")
	require.Equal(t, 3, tk.Steps, "the child's two model calls and its subagent's one")
}
