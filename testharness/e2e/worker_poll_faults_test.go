package e2e

import (
	"encoding/base64"
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

// A polled worker frozen with SIGSTOP for 10 s while its child's answer arrives, then continued:
// the task is still running at the end of the pause (lostAfterMs is 30 s), then completes with
// its result in one notice; a second task on that worker afterwards completes too, and the
// first notice is still single.
func TestPolledWorkerPausedTenSecondsLosesNothing(t *testing.T) {
	hold := newGate(t)
	f := startFleet(t, childScript(map[string]func(mockmodel.Request) mockmodel.Reply{
		"CHILD paused": func(mockmodel.Request) mockmodel.Reply {
			hold.wait(120 * time.Second)
			return mockmodel.Reply{Text: "paused result"}
		},
		"CHILD after": func(mockmodel.Request) mockmodel.Reply { return mockmodel.Reply{Text: "after result"} },
	}, map[string][]mockmodel.ToolCall{
		"LAUNCH": {remoteCall("Paused", "CHILD paused", "w1")},
		"AGAIN":  {remoteCall("After", "CHILD after", "w1")},
	}), fleetOptions{workers: 1, worker: map[string]any{"pollMs": pollMs, "lostAfterMs": 30_000}})
	f.waitWorkersUp()
	parent := f.prompt("LAUNCH")
	id := f.launchedTasks(parent, 1)[0]
	f.childAt("CHILD paused", "user")
	require.Equal(t, "w1", f.placeOf(id))
	f.waitIdle(parent)

	w := f.workers["w1"]
	w.Pause()
	paused := true
	defer func() {
		if paused {
			w.Resume() // a failed assertion leaves no frozen process behind
		}
	}()
	hold.open()                  // the child's answer reaches a frozen worker
	time.Sleep(10 * time.Second) // the fault under test: the worker frozen for 10 s
	tk, _ := findStoredTask(f.oc, id)
	require.Equal(t, task.StatusRunning, tk.Status, "a 10 s pause fails nothing: %+v", tk.Error)
	views, _ := f.workerViews()
	t.Logf("w1 at the end of the pause: %s %s", views["w1"].State, views["w1"].Error)
	w.Resume()
	paused = false

	f.eventually("the notice", 90*time.Second, func() bool { return f.noticeOf(parent, id) != "" })
	tk = storedTask(t, f.oc, id)
	require.Equal(t, task.StatusCompleted, tk.Status, "%+v", tk.Error)
	require.Equal(t, "paused result", tk.Result)
	f.eventually("w1 up again in /v1/workers", 60*time.Second, func() bool { v, _ := f.workerViews(); return v["w1"].State == "up" })
	f.waitIdle(parent)
	f.promptIn(parent, "AGAIN")
	f.eventually("the second task's notice", 90*time.Second, func() bool { return len(f.notices(parent)) >= 2 })
	f.waitIdle(parent)
	require.Equal(t, 1, f.noticesOf(parent, id), "no notice doubled")
	require.Len(t, f.notices(parent), 2)
	require.Equal(t, 1, childStarts(f, "CHILD paused"), "the paused child was not run again")
}

// A wrong password on a polled worker: a launch naming it fails naming the worker and the 401,
// nothing is created there, the worker shows down with the 401 in /v1/workers, and neither
// the wrong password nor the right one (nor their Authorization headers) shows in the launch's
// answer or anywhere else in the parent's files, logs, API or messages.
func TestPolledWorkerWrongPasswordIsNamedAndNeverShown(t *testing.T) {
	wrong := ocserve.RandomPassword(t)
	f := startFleet(t, childScript(map[string]func(mockmodel.Request) mockmodel.Reply{
		"CHILD never": func(mockmodel.Request) mockmodel.Reply { return mockmodel.Reply{Text: "never"} },
	}, map[string][]mockmodel.ToolCall{"LAUNCH": {remoteCall("Remote", "CHILD never", "w1")}}),
		fleetOptions{workers: 1, worker: map[string]any{"pollMs": pollMs}, password: func(string, string) string { return wrong }})
	parent := f.prompt("LAUNCH")
	f.eventually("the launch's answer", 90*time.Second, func() bool { return finishedParts(f.toolParts(parent, "asyncagents_task")) })
	said := f.toolResults(parent, "asyncagents_task")[0]
	require.Contains(t, said, "worker w1 cannot be reached", said)
	require.Contains(t, said, "wrong username or password (401)", said)
	real := f.workers["w1"].Password()
	secrets := map[string]string{
		"the wrong password": wrong, "the right password": real,
		"the wrong header": base64.StdEncoding.EncodeToString([]byte("opencode:" + wrong)),
		"the right header": base64.StdEncoding.EncodeToString([]byte("opencode:" + real)),
	}
	for what, secret := range secrets {
		require.NotContains(t, said, secret, "%s shows in the launch's answer", what)
	}
	require.Empty(t, storedTasks(t, f.oc), "nothing was launched")
	var sessions []ocserve.SessionInfo
	require.NoError(t, f.workers["w1"].Do(f.ctx(15*time.Second), "GET", "/session", nil, &sessions))
	require.Empty(t, sessions, "nothing was created on the worker")
	for _, r := range f.model.Turns() {
		require.NotEqual(t, "CHILD never", firstUser(r), "no child ran")
	}
	f.waitIdle(parent)
	f.eventually("w1 down for its 401 in /v1/workers", 60*time.Second, func() bool {
		v, _ := f.workerViews()
		return v["w1"].State == "down" && strings.Contains(v["w1"].Error, "401")
	})
	time.Sleep(3 * pollMs * time.Millisecond) // a few more polls, each refused
	v, _ := f.workerViews()
	require.Equal(t, "down", v["w1"].State, "still down after more polls")
	require.Equal(t, "wrong username or password (401)", v["w1"].Error)
	for what, secret := range secrets {
		require.Empty(t, f.leaks(parent, secret), "%s shows in", what)
	}
}
