package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
)

// Resting: once its task is done, a worker holding none of this parent's tasks for its
// restAfterMs rests (its stream closed, as a proxy in front of the worker sees; its health asked
// instead: GET /v1/workers says so), and an "auto" task placed there afterwards wakes it: it is
// checked, its stream opened again, and its result comes back as the first one's did.
func TestWorkerRestsWhenIdleAndWakesForATask(t *testing.T) {
	launches := map[string][]mockmodel.ToolCall{
		"LAUNCH ONE": {remoteCall("One", "CHILD 1", "w1")},
		"LAUNCH TWO": {remoteCall("Two", "CHILD 2", "auto")},
	}
	script := func(req mockmodel.Request) mockmodel.Reply {
		if name, ok := strings.CutPrefix(firstUser(req), "CHILD "); ok {
			return mockmodel.Reply{Text: "result " + name}
		}
		if calls := launches[req.LastUser]; calls != nil && lastRole(req) == "user" {
			return mockmodel.Reply{ToolCalls: calls}
		}
		return mockmodel.Reply{Text: "waiting"}
	}
	// One local slot, three on w1: "auto" prefers w1 once it rests.
	proxy := startStreamProxy(t)
	f := startFleet(t, script, fleetOptions{workers: 1, config: map[string]any{"maxConcurrentStarts": 1},
		worker: map[string]any{"maxTasks": 3, "restAfterMs": 1000, "url": proxy.url()}})
	proxy.to(strings.TrimPrefix(f.workers["w1"].URL, "http://"))

	for i, prompt := range []string{"LAUNCH ONE", "LAUNCH TWO"} {
		parent := f.prompt(prompt)
		id := f.launchedTasks(parent, 1)[0]
		f.eventually("the notice of "+prompt, 120*time.Second, func() bool { return f.noticeOf(parent, id) != "" })
		task, _ := findStoredTask(f.oc, id)
		require.Equal(t, "completed", string(task.Status), f.noticeOf(parent, id))
		require.Equal(t, []string{"result 1", "result 2"}[i], task.Result)
		require.Equal(t, "w1", f.placeOf(id), "%s ran on the worker", prompt)
		require.Equal(t, 1, f.noticesOf(parent, id))
		f.waitIdle(parent)

		var w1 workerView
		f.eventually("w1 resting after "+prompt, 60*time.Second, func() bool {
			v, _ := f.workerViews()
			w1 = v["w1"]
			return w1.State == core.WorkerResting
		})
		require.Equal(t, core.WorkerReachable, w1.Health, "its stream was up when it rested")
		require.Zero(t, w1.Running)
		f.eventually("no stream of w1 open while it rests", 30*time.Second, func() bool { return proxy.streams() == 0 })
		require.Equal(t, i+1, proxy.streamsOpened(), "one stream for each task's stay (a wake opens one)")
	}
}
