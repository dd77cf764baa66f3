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

// Faults each kind of worker (followed, or polled: pollMs) meets alike; worker is the keys its
// entry gets.

// A worker frozen with SIGSTOP for 10 s while its child's answer arrives, then continued: the
// task is still running at the end of the pause, then completes with its result, in one notice;
// the worker is up again, a second task on it afterwards completes too, the first notice is
// still single and the paused child was not run again.
func pausedTenSecondsLosesNothing(t *testing.T, worker map[string]any) (atPauseEnd string) {
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
	}), fleetOptions{workers: 1, worker: worker})
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
	atPauseEnd = views["w1"].State
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
	return atPauseEnd
}

// A wrong password: a launch on the worker fails naming the worker and the reason, nothing is
// created there, the worker shows down with the 401 in /v1/workers and stays so, and neither the
// wrong password nor the right one (nor their Authorization headers) shows in the launch's answer
// or anywhere else in the parent's files, logs, API or messages.
func wrongPasswordIsNamedAndNeverShown(t *testing.T, worker map[string]any) {
	wrong := ocserve.RandomPassword(t)
	f := startFleet(t, childScript(map[string]func(mockmodel.Request) mockmodel.Reply{
		"CHILD never": func(mockmodel.Request) mockmodel.Reply { return mockmodel.Reply{Text: "never"} },
	}, map[string][]mockmodel.ToolCall{"LAUNCH": {remoteCall("Remote", "CHILD never", "w1")}}),
		fleetOptions{workers: 1, worker: worker, password: func(string, string) string { return wrong }})
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
	time.Sleep(3 * pollMs * time.Millisecond) // a few more polls (or reconnects), each refused
	v, _ := f.workerViews()
	require.Equal(t, "down", v["w1"].State, "still down after more polls")
	require.Equal(t, "wrong username or password (401)", v["w1"].Error)
	for what, secret := range secrets {
		require.Empty(t, f.leaks(parent, secret), "%s shows in", what)
	}
}
