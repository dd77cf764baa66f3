package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
)

// childScript answers the children by their prompt (firstUser) and the parent with launchScript.
func childScript(children map[string]func(mockmodel.Request) mockmodel.Reply, launches map[string][]mockmodel.ToolCall) mockmodel.Script {
	return func(req mockmodel.Request) mockmodel.Reply {
		if child := children[firstUser(req)]; child != nil {
			return child(req)
		}
		if calls := launches[req.LastUser]; calls != nil && lastRole(req) == "user" {
			return mockmodel.Reply{ToolCalls: calls}
		}
		return mockmodel.Reply{Text: "waiting"}
	}
}

// childAt waits (bounded) until the mock got a request of the child with prompt first whose
// last message has role last ("user": it started; "tool": it did its first step).
func (f *fleet) childAt(first, last string) {
	f.t.Helper()
	_, err := f.model.WaitFor(f.ctx(90*time.Second), func(r mockmodel.Request) bool { return firstUser(r) == first && lastRole(r) == last })
	require.NoError(f.t, err, "child %q at its %s turn", first, last)
}

// A worker killed with -9 while its child works: after lostAfterMs (not before) the task fails
// naming the worker, keeping the work it streamed, and is not run again; a task on the other
// worker goes on and completes.
func TestWorkerKilledMidTaskFailsAfterLostAfterMs(t *testing.T) {
	const lostAfter = 5 * time.Second
	steady := newGate(t)
	f := startFleet(t, childScript(map[string]func(mockmodel.Request) mockmodel.Reply{
		"CHILD doomed": func(r mockmodel.Request) mockmodel.Reply {
			return workThen(r, mockmodel.Reply{Text: "never", Delay: stallLong})
		},
		"CHILD steady": func(mockmodel.Request) mockmodel.Reply {
			steady.wait(120 * time.Second)
			return mockmodel.Reply{Text: "steady result"}
		},
	}, map[string][]mockmodel.ToolCall{"LAUNCH": {remoteCall("Doomed", "CHILD doomed", "w1"), remoteCall("Steady", "CHILD steady", "w2")}}),
		fleetOptions{workers: 2, worker: map[string]any{"lostAfterMs": lostAfter.Milliseconds()}})
	f.waitWorkersUp()
	parent := f.prompt("LAUNCH")
	ids := f.launchedTasks(parent, 2)
	doomed, other := ids[0], ids[1]
	f.childAt("CHILD doomed", "tool")
	f.childAt("CHILD steady", "user")
	require.Equal(t, "w2", f.placeOf(other))

	f.workers["w1"].Kill()
	killed := time.Now()
	f.eventually("the doomed task's notice", 90*time.Second, func() bool { return f.noticeOf(parent, doomed) != "" })
	took := time.Since(killed)
	require.GreaterOrEqual(t, took, lostAfter-300*time.Millisecond, "the task failed only after lostAfterMs")
	task, _ := findStoredTask(f.oc, doomed)
	require.Equal(t, "error", string(task.Status))
	require.NotNil(t, task.Error)
	require.Contains(t, task.Error.Message, "worker w1 was lost", "the error names the worker")
	require.Contains(t, f.noticeOf(parent, doomed), "worker w1 was lost")
	require.NotNil(t, task.Partial, "the partial work streamed from the worker is kept")
	require.Equal(t, halfWork, task.Partial.Text)
	require.NotEmpty(t, task.Partial.Tools)
	require.Equal(t, "glob", task.Partial.Tools[0].Name)
	t.Logf("failed %s after the kill (lostAfterMs %s)", took.Round(time.Millisecond), lostAfter)

	st, _ := findStoredTask(f.oc, other)
	require.Equal(t, "running", string(st.Status), "the other worker's task is unaffected")
	steady.open()
	f.eventually("the steady task's notice", 90*time.Second, func() bool { return f.noticeOf(parent, other) != "" })
	st, _ = findStoredTask(f.oc, other)
	require.Equal(t, "completed", string(st.Status))
	require.Equal(t, "steady result", st.Result)
	require.Equal(t, 1, f.noticesOf(parent, doomed))
	require.Equal(t, 1, f.noticesOf(parent, other))
	starts := 0
	for _, r := range f.model.Turns() {
		if firstUser(r) == "CHILD doomed" && lastRole(r) == "user" {
			starts++
		}
	}
	require.Equal(t, 1, starts, "a lost task is not run again (rerunLost is off)")
}

// A followed worker frozen with SIGSTOP for 10 s loses nothing (worker_fault_cases_test.go).
func TestWorkerPausedTenSecondsLosesNothing(t *testing.T) { _ = pausedTenSecondsLosesNothing(t, nil) }

// A wrong password on a followed worker is named and never shown (worker_fault_cases_test.go).
func TestWorkerWrongPasswordIsNamedAndNeverShown(t *testing.T) {
	wrongPasswordIsNamedAndNeverShown(t, nil)
}

// The parent killed (-9) and started again while two remote tasks run: one child ends while the
// parent is down, the other after it is back. Both are reconciled from their workers and each
// result reaches the parent once.
func TestWorkerParentRestartReconcilesRemoteTasks(t *testing.T) {
	first, second := newGate(t), newGate(t)
	f := startFleet(t, childScript(map[string]func(mockmodel.Request) mockmodel.Reply{
		"CHILD r1": func(mockmodel.Request) mockmodel.Reply {
			first.wait(120 * time.Second)
			return mockmodel.Reply{Text: "result r1"}
		},
		"CHILD r2": func(mockmodel.Request) mockmodel.Reply {
			second.wait(180 * time.Second)
			return mockmodel.Reply{Text: "result r2"}
		},
	}, map[string][]mockmodel.ToolCall{"LAUNCH": {remoteCall("R1", "CHILD r1", "w1"), remoteCall("R2", "CHILD r2", "w2")}}),
		fleetOptions{workers: 2})
	f.waitWorkersUp()
	parent := f.prompt("LAUNCH")
	ids := f.launchedTasks(parent, 2)
	f.childAt("CHILD r1", "user")
	f.childAt("CHILD r2", "user")
	require.Equal(t, "w1", f.placeOf(ids[0]))
	require.Equal(t, "w2", f.placeOf(ids[1]))
	f.waitIdle(parent)

	f.oc.Kill()
	first.open()
	w1 := f.workers["w1"]
	f.eventually("r1's child idle on w1 while the parent is down", 60*time.Second, func() bool {
		st, err := w1.Status(f.ctx(15 * time.Second))
		return err == nil && len(st) == 0
	})
	f.restartParent(false)
	f.waitWorkersUp()
	f.eventually("r1's notice after the restart", 90*time.Second, func() bool { return f.noticeOf(parent, ids[0]) != "" })
	second.open()
	f.eventually("r2's notice", 90*time.Second, func() bool { return f.noticeOf(parent, ids[1]) != "" })
	f.waitIdle(parent)
	for i, id := range ids {
		task, _ := findStoredTask(f.oc, id)
		require.Equal(t, "completed", string(task.Status), id)
		require.Equal(t, []string{"result r1", "result r2"}[i], task.Result)
		require.Equal(t, 1, f.noticesOf(parent, id), "one notice for %s", id)
	}
}

// A worker that cannot be reached at launch (killed, its stream down): "auto" places the task
// locally and it completes; a launch naming that worker fails with its name and the reason, and
// nothing is created for it.
func TestWorkerUnreachableAtLaunch(t *testing.T) {
	f := startFleet(t, childScript(map[string]func(mockmodel.Request) mockmodel.Reply{
		"CHILD auto":  func(mockmodel.Request) mockmodel.Reply { return mockmodel.Reply{Text: "auto result"} },
		"CHILD named": func(mockmodel.Request) mockmodel.Reply { return mockmodel.Reply{Text: "never"} },
	}, map[string][]mockmodel.ToolCall{"LAUNCH": {remoteCall("Auto", "CHILD auto", "auto"), remoteCall("Named", "CHILD named", "w1")}}),
		fleetOptions{workers: 1})
	f.waitWorkersUp()
	f.workers["w1"].Kill()
	f.eventually("w1 down in /v1/workers", 60*time.Second, func() bool { v, _ := f.workerViews(); return v["w1"].State == "down" })

	parent := f.prompt("LAUNCH")
	f.eventually("both launch answers", 90*time.Second, func() bool {
		parts := f.toolParts(parent, "asyncagents_task")
		return len(parts) == 2 && finishedParts(parts)
	})
	var autoID, refusal string
	for _, r := range f.toolResults(parent, "asyncagents_task") {
		if m := taskIDLine.FindStringSubmatch(r); m != nil {
			autoID = m[1]
		} else {
			refusal = r
		}
	}
	require.Contains(t, refusal, "worker w1 cannot be reached", refusal)
	require.Contains(t, refusal, "connection refused", refusal)
	require.NotEmpty(t, autoID, "the auto launch was placed")
	f.eventually("the auto task's notice", 90*time.Second, func() bool { return f.noticeOf(parent, autoID) != "" })
	require.Equal(t, "local", f.placeOf(autoID), "auto placed it on the only place up")
	task, _ := findStoredTask(f.oc, autoID)
	require.Equal(t, "auto result", task.Result)
	require.Len(t, storedTasks(t, f.oc), 1, "nothing was created for the refused launch")
	for _, r := range f.model.Turns() {
		require.NotEqual(t, "CHILD named", firstUser(r), "the named worker's child never ran")
	}
}
