package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
)

// A polled worker (pollMs) never has its stream opened, as a proxy in front of it sees, yet its
// tasks behave as on a followed one: each result comes back once, a question a child asks there
// reaches the user and the user's answer lets it finish and is recorded as given, a running
// task's partial work is read while it works, and a kill -9 of the worker fails its task as lost
// after lostAfterMs, naming the worker, its partial work kept.
func TestAPolledWorkerRunsItsTasksWithoutItsStream(t *testing.T) {
	const lostAfter = 5 * time.Second
	script := childScript(map[string]func(mockmodel.Request) mockmodel.Reply{
		"CHILD plain": func(r mockmodel.Request) mockmodel.Reply {
			return workThen(r, mockmodel.Reply{Text: "plain result"})
		},
		"CHILD asks": func(r mockmodel.Request) mockmodel.Reply {
			if lastRole(r) == "user" {
				return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "bash", Args: map[string]any{"command": "echo polled-permission", "description": "asks first"}}}}
			}
			return mockmodel.Reply{Text: "after bash: " + r.Messages[len(r.Messages)-1].Content}
		},
		"CHILD doomed": func(r mockmodel.Request) mockmodel.Reply {
			return workThen(r, mockmodel.Reply{Text: "never", Delay: stallLong})
		},
	}, map[string][]mockmodel.ToolCall{
		"GO":    {remoteCall("Plain", "CHILD plain", "w1"), remoteCall("Asks", "CHILD asks", "w1")},
		"AGAIN": {remoteCall("Doomed", "CHILD doomed", "w1")},
	})
	proxy := startStreamProxy(t)
	f := startFleet(t, script, fleetOptions{workers: 1,
		worker:       map[string]any{"url": proxy.url(), "pollMs": 500, "lostAfterMs": lostAfter.Milliseconds()},
		workerConfig: map[string]any{"agent": map[string]any{"general": map[string]any{"permission": map[string]any{"bash": "ask"}}}}})
	proxy.to(strings.TrimPrefix(f.workers["w1"].URL, "http://"))
	f.waitWorkersUp()
	sj := f.api()

	parent := f.prompt("GO")
	ids := f.launchedTasks(parent, 2)
	plain, asks := ids[0], ids[1]
	var waiting *task.PermissionRequest
	f.eventually("the asking task marked waiting, from a poll", 60*time.Second, func() bool {
		tk, _ := findStoredTask(f.oc, asks)
		waiting = tk.WaitingPermission()
		return waiting != nil
	})
	require.Equal(t, []string{"echo polled-permission"}, waiting.Patterns)
	line := "waits for permission: bash echo polled-permission"
	f.eventually("the ⏸ line in the parent's session", 60*time.Second, func() bool { return f.visibleLines(parent, line) > 0 })
	code, body := answerPermission(t, sj, asks, `{"requestId":"`+waiting.ID+`","reply":"once"}`)
	require.Equal(t, 202, code, body)

	for id, want := range map[string]string{plain: "plain result", asks: "polled-permission"} {
		f.eventually("the notice of "+id, 90*time.Second, func() bool { return f.noticeOf(parent, id) != "" })
		tk := storedTask(t, f.oc, id)
		require.Equal(t, task.StatusCompleted, tk.Status, "%+v", tk.Error)
		require.Contains(t, tk.Result, want)
		require.Equal(t, "w1", f.placeOf(id))
	}
	f.waitIdle(parent)
	require.Equal(t, 1, f.noticesOf(parent, plain))
	require.Equal(t, 1, f.noticesOf(parent, asks))
	require.Equal(t, 1, f.visibleLines(parent, line), "the user is told of the question once")
	answered := storedTask(t, f.oc, asks).Permissions
	require.Len(t, answered, 1)
	require.Equal(t, "once", answered[0].Reply, "recorded as answered, not gone")
	require.Zero(t, proxy.streamsOpened(), "a polled worker's stream is never opened")

	again := f.prompt("AGAIN")
	doomed := f.launchedTasks(again, 1)[0]
	f.childAt("CHILD doomed", "tool")
	// No stream brings its parts: its newest messages, read every 5 s while it is busy, do.
	f.eventually("the doomed task's partial work, from a progress read", 30*time.Second, func() bool {
		tk, _ := findStoredTask(f.oc, doomed)
		return tk.Partial != nil && tk.Partial.Text == halfWork && len(tk.Partial.Tools) > 0
	})
	f.workers["w1"].Kill()
	killed := time.Now()
	f.eventually("the doomed task's notice", 90*time.Second, func() bool { return f.noticeOf(again, doomed) != "" })
	took := time.Since(killed)
	require.GreaterOrEqual(t, took, lostAfter-300*time.Millisecond, "the task failed only after lostAfterMs")
	tk := storedTask(t, f.oc, doomed)
	require.Equal(t, task.StatusError, tk.Status)
	require.Contains(t, tk.Error.Message, "worker w1 was lost")
	require.Equal(t, halfWork, tk.Partial.Text, "the partial work read before the loss is kept")
	require.Equal(t, "glob", tk.Partial.Tools[0].Name)
	require.Zero(t, proxy.streamsOpened())
	t.Logf("lost %s after the kill (lostAfterMs %s)", took.Round(time.Millisecond), lostAfter)
}
