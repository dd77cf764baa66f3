package e2e

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// A worker whose clock runs a minute behind the parent's (libfaketime on its OpenCode): a remote
// child steered in the middle of a slow shell call ends with the answer to the message. The
// core reads OpenCode's timestamps against the worker's own clock, which it learns from the
// sessions it creates there; read against the parent's, the answer looked a minute older than
// the message, was taken for the stale one, and the task failed with no answer.
func TestASteeredChildOnAWorkerWhoseClockIsBehind(t *testing.T) {
	steerOnAWorkerBehind(t, false)
}

// The same, with the parent restarted while the child works: the restarted core has created no
// session on the worker, and learns its clock from the Date of the worker's health answer when
// its stream comes up. Before, it read the worker's clock as its own until a session was made
// there, and the steered task failed as above.
func TestASteeredChildOnAWorkerBehindAfterTheParentRestarts(t *testing.T) {
	steerOnAWorkerBehind(t, true)
}

// steerOnAWorkerBehind launches a child on a worker a minute behind, restarts the parent in the
// middle of the child's shell call if restart is set, steers the child, and checks its answer is
// the task's result.
func steerOnAWorkerBehind(t *testing.T, restart bool) {
	var mu sync.Mutex
	steered := false
	script := func(req mockmodel.Request) mockmodel.Reply {
		if firstUser(req) == "CHILD behind" {
			if req.LastUser == "ALSO CHECK THE README" {
				mu.Lock()
				steered = true
				mu.Unlock()
			}
			return steeredChild(req)
		}
		switch {
		case req.LastUser == "GO" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{remoteCall("Behind", "CHILD behind", "w1")}}
		case req.LastUser == "STEER" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{
				{Name: "asyncagents_message", Args: map[string]any{"task_id": launchedIDs(req)[0], "message": "ALSO CHECK THE README"}}}}
		}
		return mockmodel.Reply{Text: "ok"}
	}
	f := startFleet(t, script, fleetOptions{workers: 1, workerEnv: map[string][]string{"w1": ocserve.ClockOff(t, "-60s")}})
	f.waitWorkersUp()
	w := f.workers["w1"]
	parent := f.prompt("GO")
	id := f.launchedTasks(parent, 1)[0]
	session := f.sessionOf(id)
	f.eventually("the child's shell at work on w1", 60*time.Second, func() bool {
		msgs, err := w.Messages(f.ctx(15*time.Second), session)
		if err != nil || len(msgs) == 0 {
			return false
		}
		ahead := time.Now().UnixMilli() - msgs[0].Info.Time.Created
		require.Greater(t, ahead, int64(50_000), "w1's clock is a minute behind")
		return shellAtWork(msgs)
	})
	f.waitIdle(parent)
	if restart {
		f.restartParent(false)
		f.waitWorkersUp()
	}
	f.promptIn(parent, "STEER")
	f.eventually("the task's notice", 90*time.Second, func() bool { return f.noticesOf(parent, id) == 1 })
	tk := storedTask(t, f.oc, id)
	require.Equal(t, task.StatusCompleted, tk.Status, "%+v", tk.Error)
	require.Equal(t, "the README is checked too", tk.Result)
	mu.Lock()
	require.True(t, steered, "the child answered the message")
	mu.Unlock()
}
