package e2e

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
)

// While the parent's stream of a worker is cut, the remote child runs a subagent of its own
// (OpenCode's task tool): the parent does not see its session made. Its model call ends once the
// stream is back; that spending names a session the parent does not know, which it traces up
// the worker's sessions to the task, so the call counts toward the task (its usage marks name the
// subagent's session) as a subagent's seen made would.
func TestWorkerSubagentMadeWhileTheStreamWasCutSpendsForItsTask(t *testing.T) {
	var gates [2]chan struct{}
	var opened [2]sync.Once
	open := func(i int) { opened[i].Do(func() { close(gates[i]) }) }
	for i := range gates {
		gates[i] = make(chan struct{})
		t.Cleanup(func() { open(i) })
	}
	wait := func(i int) {
		select {
		case <-gates[i]:
		case <-time.After(90 * time.Second):
		}
	}
	var leading, subStarted atomic.Bool
	script := func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case firstUser(req) == "SUB spends" && lastRole(req) == "user":
			subStarted.Store(true)
			wait(1)
			return mockmodel.Reply{Text: "sub done"}
		}
		return leadOnW1(req, "SUB spends", func() { leading.Store(true); wait(0) })
	}
	f, proxy := startGapFleet(t, script, map[string]any{
		"subagent_depth": 3,
		"agent": map[string]any{
			"orchestrator": map[string]any{"mode": "subagent", "description": "splits work", "permission": map[string]any{"task": "allow"}},
		}})
	parent := f.prompt("GO")
	id := f.launchedTasks(parent, 1)[0]
	f.eventually("the child's first model request, on w1", 60*time.Second, leading.Load)
	f.cutStream(proxy)
	open(0)
	f.eventually("the subagent's model request, made while the stream was cut", 60*time.Second, subStarted.Load)

	proxy.hold(false)
	f.eventually("w1 up again for the parent", 30*time.Second, func() bool {
		v, _ := f.workerViews()
		return v["w1"].State == core.WorkerUp
	})
	open(1)
	f.eventually("the task's end", 90*time.Second, func() bool {
		tk, _ := findStoredTask(f.oc, id)
		return tk.Status.Terminal()
	})
	tk := storedTask(t, f.oc, id)
	require.Equal(t, task.StatusCompleted, tk.Status, "%+v", tk.Error)
	require.Contains(t, tk.Result, "sub done")
	sub := subagentMarks(tk)
	require.Len(t, sub, 1, "the subagent's call counted for the task: %+v", tk.UsageMarks)
	require.NotEmpty(t, sub[0].Message, "its message")
	require.NotEmpty(t, sub[0].Step, "and its step")
}

// subagentMarks are tk's usage marks of sessions other than its child's: its subagents'.
func subagentMarks(tk task.Task) []task.UsageMark {
	var sub []task.UsageMark
	for _, m := range tk.UsageMarks {
		if m.Session != tk.SessionID {
			sub = append(sub, m)
		}
	}
	return sub
}
