package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// asyncagents_cancel(all) reaches a launch that has no task yet because its worker's health is
// being asked: w1 is frozen (SIGSTOP) from before the plugin starts, so its stream is not up and
// the launch waits on a health check; cancel(all), in the same turn, counts it as still starting;
// once w1 continues and answers, the task is made cancelled and no child ever starts there.
func TestCancelAllReachesALaunchWaitingOnItsWorkersHealth(t *testing.T) {
	f := startFleet(t, childScript(map[string]func(mockmodel.Request) mockmodel.Reply{
		"CHILD held": func(mockmodel.Request) mockmodel.Reply { return mockmodel.Reply{Text: "should never run"} },
	}, map[string][]mockmodel.ToolCall{
		"LAUNCH": {remoteCall("Held", "CHILD held", "w1"), {Name: "asyncagents_cancel", Args: map[string]any{"all": true}}},
	}), fleetOptions{workers: 1})
	w := f.workers["w1"]
	w.Pause()
	t.Cleanup(w.Resume)
	parent := f.prompt("LAUNCH") // the plugin loads with w1 frozen
	var cancelled string
	f.eventually("cancel(all)'s answer", 60*time.Second, func() bool {
		out := f.toolResults(parent, "asyncagents_cancel")
		if len(out) == 1 {
			cancelled = out[0]
		}
		return cancelled != ""
	})
	require.Contains(t, cancelled, "1 task still starting will be cancelled as soon as it exists.")
	w.Resume()
	ids := f.launchedTasks(parent, 1)
	f.eventually("the task stored as cancelled", 60*time.Second, func() bool {
		tk, ok := findStoredTask(f.oc, ids[0])
		return ok && string(tk.Status) == "cancelled"
	})
	tk, _ := findStoredTask(f.oc, ids[0])
	require.Equal(t, "w1", tk.Worker)
	require.Empty(t, tk.SessionID, "no child session was made")
	var sessions []ocserve.SessionInfo
	require.NoError(t, w.Do(f.ctx(30*time.Second), "GET", "/session", nil, &sessions))
	for _, s := range sessions {
		require.NotContains(t, s.Title, "Held", "no child session on the worker")
	}
	for _, r := range f.model.Turns() {
		require.NotEqual(t, "CHILD held", firstUser(r), "the child never ran")
	}
}
