package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// pollMs is the polled worker's interval in these tests.
const pollMs = 500

// childStarts counts the mock's requests that start the child with prompt first (its first
// turn): more than one means the child was run again.
func childStarts(f *fleet, first string) int {
	n := 0
	for _, r := range f.model.Turns() {
		if firstUser(r) == first && lastRole(r) == "user" {
			n++
		}
	}
	return n
}

// The parent killed (-9) and started again while two tasks run on a polled worker: one child
// ends while the parent is down, the other after it is back. The restarted parent reconciles
// both from the worker's statuses (its stream is still never opened), each result reaches the
// parent once, and neither child is run again nor a session made again on the worker.
func TestPolledWorkerParentRestartReconcilesItsTasks(t *testing.T) {
	first, second := newGate(t), newGate(t)
	proxy := startStreamProxy(t)
	f := startFleet(t, childScript(map[string]func(mockmodel.Request) mockmodel.Reply{
		"CHILD p1": func(mockmodel.Request) mockmodel.Reply {
			first.wait(120 * time.Second)
			return mockmodel.Reply{Text: "result p1"}
		},
		"CHILD p2": func(mockmodel.Request) mockmodel.Reply {
			second.wait(180 * time.Second)
			return mockmodel.Reply{Text: "result p2"}
		},
	}, map[string][]mockmodel.ToolCall{"LAUNCH": {remoteCall("P1", "CHILD p1", "w1"), remoteCall("P2", "CHILD p2", "w1")}}),
		fleetOptions{workers: 1, worker: map[string]any{"url": proxy.url(), "pollMs": pollMs}})
	proxy.to(strings.TrimPrefix(f.workers["w1"].URL, "http://"))
	f.waitWorkersUp()
	parent := f.prompt("LAUNCH")
	ids := f.launchedTasks(parent, 2)
	f.childAt("CHILD p1", "user")
	f.childAt("CHILD p2", "user")
	require.Equal(t, "w1", f.placeOf(ids[0]))
	require.Equal(t, "w1", f.placeOf(ids[1]))
	f.waitIdle(parent)

	f.oc.Kill()
	first.open()
	w1 := f.workers["w1"]
	f.eventually("p1's child idle on w1 while the parent is down", 60*time.Second, func() bool {
		st, err := w1.Status(f.ctx(15 * time.Second))
		return err == nil && len(st) == 1
	})
	f.restartParent(false)
	f.waitWorkersUp()
	f.eventually("p1's notice after the restart", 90*time.Second, func() bool { return f.noticeOf(parent, ids[0]) != "" })
	p1 := storedTask(t, f.oc, ids[0])
	require.Equal(t, task.StatusCompleted, p1.Status, "%+v", p1.Error)
	require.Equal(t, "result p1", p1.Result)
	p2 := storedTask(t, f.oc, ids[1])
	require.Equal(t, task.StatusRunning, p2.Status, "the busy child is still followed by its polls: %+v", p2.Error)

	second.open()
	f.eventually("p2's notice", 90*time.Second, func() bool { return f.noticeOf(parent, ids[1]) != "" })
	f.waitIdle(parent)
	for i, id := range ids {
		tk := storedTask(t, f.oc, id)
		require.Equal(t, task.StatusCompleted, tk.Status, "%s: %+v", id, tk.Error)
		require.Equal(t, []string{"result p1", "result p2"}[i], tk.Result)
		require.Equal(t, 1, f.noticesOf(parent, id), "one notice for %s", id)
	}
	require.Equal(t, 1, childStarts(f, "CHILD p1"), "p1 was not run again")
	require.Equal(t, 1, childStarts(f, "CHILD p2"), "p2 was not run again")
	var sessions []ocserve.SessionInfo
	require.NoError(t, w1.Do(f.ctx(15*time.Second), "GET", "/session", nil, &sessions))
	require.Len(t, sessions, 2, "no session was made again on the worker")
	require.Zero(t, proxy.streamsOpened(), "neither parent opened the polled worker's stream")
}

// A polled worker frozen for 10 s: as a followed one (pausedTenSecondsLosesNothing), its health
// asks time out meanwhile and it is down for a while, not lost.
func TestPolledWorkerPausedTenSecondsLosesNothing(t *testing.T) {
	state := pausedTenSecondsLosesNothing(t, map[string]any{"pollMs": pollMs, "lostAfterMs": 30_000})
	require.Equal(t, "down", state, "its health asks timed out during the pause")
}

// A wrong password on a polled worker, as on a followed one (wrongPasswordIsNamedAndNeverShown).
func TestPolledWorkerWrongPasswordIsNamedAndNeverShown(t *testing.T) {
	wrongPasswordIsNamedAndNeverShown(t, map[string]any{"pollMs": pollMs})
}
