package core

import (
	"encoding/json"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// polledW1 is twoWorkers with w1 polled every second.
func polledW1(mut func(*config.Config)) config.Config {
	return twoWorkers(func(c *config.Config) {
		w := c.Workers["w1"]
		w.PollMs = 1000
		c.Workers["w1"] = w
		if mut != nil {
			mut(c)
		}
	})
}

// tick fires w1's poll timer.
func (h *wkHarness) tick() []Effect {
	h.now += 1000
	return h.run(Event{Type: EventTimer, TimerID: workerPollPrefix + "w1"})
}

// A polled worker's stream is never opened: its health says up, and its timer keeps asking.
func TestAPolledWorkerIsNeverFollowed(t *testing.T) {
	h := newWK(t, polledW1(nil))
	eff := h.run(Event{Type: EventStart})
	for _, f := range ofKind(eff, EffectWorkerFollow) {
		require.NotEqual(t, "w1", f.Worker, "w1 is polled, not followed")
	}
	require.Len(t, ofKind(eff, EffectWorkerFollow), 1, "w2 is followed as before")
	require.Len(t, timersNamed(eff, workerPollPrefix+"w1"), 1)
	require.True(t, h.m.workerUp("w1"), "its health answered: it is up")
	require.Equal(t, "1.18.33", h.m.Workers()[0].Version)

	// Idle past restAfterMs: a polled worker does not rest (it has no stream to close).
	h.now += config.DefaultWorkerRestAfterMs + 1
	eff = h.run(Event{Type: EventTimer, TimerID: HeartbeatTimer})
	require.Empty(t, ofKind(eff, EffectWorkerUnfollow))
	require.True(t, h.m.workerUp("w1"))
	eff = h.tick()
	require.Len(t, ofKind(eff, EffectWorkerHealth), 1, "idle, only its health is asked")
	require.Empty(t, ofKind(eff, EffectStatus))
	require.Len(t, timersNamed(eff, workerPollPrefix+"w1"), 1, "the timer goes on")
}

// A task on a polled worker: each tick reads its status and its questions; a busy status is
// activity (no stall); once it is no longer busy its messages end it, with one notice.
func TestAPolledTaskEndsAtTheTickAfterItsEnd(t *testing.T) {
	h := newWK(t, polledW1(stallAfter(2_500)))
	h.run(Event{Type: EventStart})
	r, _ := h.launchOn("a", "w1")
	tk := h.taskOf(r)
	require.Equal(t, "w1", tk.Worker)
	h.idleParent()

	for range 5 { // 5 s busy, past the 2.5 s stall threshold
		eff := h.tick()
		st := ofKind(eff, EffectStatus)
		require.Len(t, st, 1)
		require.Equal(t, "/srv/w1/repo", st[0].Directory)
		require.Len(t, ofKind(eff, EffectPermissionList), 1, "its questions are read at each tick")
		h.run(Event{Type: EventEffectDone, EffectID: st[0].ID, OK: true, Result: json.RawMessage(`{"` + tk.SessionID + `":{"type":"busy"}}`)})
		h.poll() // the liveness check
	}
	require.Zero(t, tk.StalledSince, "busy at each tick: no stall")

	eff := h.tick()
	eff = h.run(Event{Type: EventEffectDone, EffectID: ofKind(eff, EffectStatus)[0].ID, OK: true, Result: json.RawMessage(`{}`)})
	rd := ofKind(eff, EffectMessages)
	require.Len(t, rd, 1, "no longer busy: its messages are read")
	eff = h.run(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true, Result: json.RawMessage(
		`[{"info":{"id":"m1","role":"assistant","finish":"stop","time":{"created":1,"completed":2}},"parts":[{"type":"text","text":"done remotely"}]}]`)})
	require.Equal(t, task.StatusCompleted, tk.Status)
	require.Equal(t, "done remotely", tk.Result)
	require.Len(t, parentNotices(eff), 1)
	require.Empty(t, ofKind(h.tick(), EffectStatus), "nothing left to read")
}

// A silent task on a polled worker (not listed busy, no answer yet) is marked stalled as any.
func TestAPolledTaskNotBusyStalls(t *testing.T) {
	h := newWK(t, polledW1(stallAfter(2_500)))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	for range 3 {
		eff := h.tick()
		eff = h.run(Event{Type: EventEffectDone, EffectID: ofKind(eff, EffectStatus)[0].ID, OK: true, Result: json.RawMessage(`{}`)})
		h.run(Event{Type: EventEffectDone, EffectID: ofKind(eff, EffectMessages)[0].ID, OK: true, Result: json.RawMessage(`[]`)})
		h.poll()
	}
	require.NotZero(t, tk.StalledSince)
	require.Equal(t, task.StatusRunning, tk.Status)
}

// A retry status is told as the stream's session.status would be: the task shows the retry.
func TestAPolledRetryIsSeen(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	eff := h.tick()
	h.run(Event{Type: EventEffectDone, EffectID: ofKind(eff, EffectStatus)[0].ID, OK: true, Result: json.RawMessage(
		`{"` + tk.SessionID + `":{"type":"retry","attempt":2,"message":"rate limited","next":99}}`)})
	require.NotNil(t, tk.Retry)
	require.Equal(t, "rate limited", tk.Retry.Message)
}

// A polled worker whose health stops answering is down: lostAfterMs later its tasks fail as
// lost, naming it and the reason. One that answers again in time loses nothing.
func TestAPolledWorkerThatStopsAnsweringIsLost(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	h.healthErr["w1"] = "timed out after 5 s"
	eff := h.tick()
	require.False(t, h.m.workerUp("w1"))
	require.Len(t, timersNamed(eff, workerLostPrefix+"w1"), 1)
	eff = h.tick()
	require.Empty(t, ofKind(eff, EffectStatus), "down: nothing but its health is asked")
	require.Empty(t, timersNamed(eff, workerLostPrefix+"w1"), "the lost timer is armed once")

	// Back in time: the timer is cleared and its task read at once.
	delete(h.healthErr, "w1")
	eff = h.tick()
	require.True(t, h.m.workerUp("w1"))
	require.Len(t, ofKind(eff, EffectTimerClear), 1)
	require.Len(t, ofKind(eff, EffectStatus), 1)

	// Down again, for good.
	h.healthErr["w1"] = "connection refused"
	h.tick()
	h.run(Event{Type: EventTimer, TimerID: workerLostPrefix + "w1"})
	require.Equal(t, task.StatusError, tk.Status)
	require.Equal(t, "worker w1 was lost: connection refused", tk.Error.Message)
}

// A polled worker that never answered at start is down with its reason; a named launch there
// is refused as for a followed worker that cannot be reached.
func TestAPolledWorkerDownAtStart(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.healthErr["w1"] = "connection refused"
	h.run(Event{Type: EventStart})
	require.False(t, h.m.workerUp("w1"))
	info := h.m.Workers()[0]
	require.Equal(t, WorkerDown, info.State)
	require.Equal(t, "connection refused", info.Error)
	reply, _ := h.launchOn("a", "w1")
	require.Contains(t, reply.Error, "w1")
	require.Contains(t, reply.Error, "connection refused")
}

// stallAfter sets the stall threshold.
func stallAfter(ms int64) func(*config.Config) {
	return func(c *config.Config) { c.Stall.WarnAfterMs = &ms }
}
