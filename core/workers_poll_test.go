package core

import (
	"encoding/json"
	"fmt"
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
	h.now += 1000
	eff = h.run(Event{Type: EventTimer, TimerID: HeartbeatTimer})
	require.Empty(t, ofKind(eff, EffectWorkerHealth), "the heartbeat does not ask what a tick just asked")
}

// busyTick fires w1's poll timer, answers its status read with tk busy, and its read of tk's
// newest messages, if it asks, with msgs; returns the effects.
func (h *wkHarness) busyTick(tk *run, msgs string) []Effect {
	eff := h.tick()
	st := ofKind(eff, EffectStatus)
	require.Len(h.t, st, 1)
	for _, pl := range ofKind(eff, EffectPermissionList) {
		h.listed(pl, `[]`)
	}
	out := h.run(Event{Type: EventEffectDone, EffectID: st[0].ID, OK: true, Result: json.RawMessage(`{"` + tk.SessionID + `":{"type":"busy"}}`)})
	for _, rd := range ofKind(out, EffectMessages) {
		out = append(out, h.run(Event{Type: EventEffectDone, EffectID: rd.ID, OK: true, Result: json.RawMessage(msgs)})...)
	}
	return append(eff, out...)
}

// workingOn is a child's step under way, as GET /session/:id/message lists it: its text so far
// and a glob call.
func workingOn(session string, at int64, text string) string {
	return fmt.Sprintf(`[{"info":{"id":"msg_u","sessionID":%[1]q,"role":"user","time":{"created":%[2]d}},"parts":[]},
	 {"info":{"id":"msg_a","sessionID":%[1]q,"role":"assistant","time":{"created":%[2]d},"tokens":{"input":100,"output":20,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0.01},
	  "parts":[{"id":"prt_t","sessionID":%[1]q,"messageID":"msg_a","type":"text","text":%[3]q,"time":{"start":%[2]d,"end":%[2]d}},
	           {"id":"prt_g","sessionID":%[1]q,"messageID":"msg_a","type":"tool","callID":"call_g","tool":"glob","state":{"status":"completed","title":"*.md"}}]}]`, session, at, text)
}

// A task on a polled worker: each tick reads its status and its questions; a busy status is
// activity (no stall), and every 5 s its newest messages are read for its progress and partial
// work; once it is no longer busy its messages end it, with one notice.
func TestAPolledTaskEndsAtTheTickAfterItsEnd(t *testing.T) {
	h := newWK(t, polledW1(stallAfter(2_500)))
	h.run(Event{Type: EventStart})
	r, _ := h.launchOn("a", "w1")
	tk := h.taskOf(r)
	require.Equal(t, "w1", tk.Worker)
	h.idleParent()

	reads := 0
	for range 6 { // 6 s busy, past the 2.5 s stall threshold
		eff := h.busyTick(tk, workingOn(tk.SessionID, tk.StartedAt, "half of it"))
		require.Len(t, ofKind(eff, EffectPermissionList), 1, "its questions are read at each tick")
		for _, rd := range ofKind(eff, EffectMessages) {
			require.Equal(t, polledProgressMessages, rd.Limit, "only the newest messages")
			require.Equal(t, "w1", rd.Worker)
			reads++
		}
		h.poll() // the liveness check
	}
	require.Zero(t, tk.StalledSince, "busy at each tick: no stall")
	require.Equal(t, 2, reads, "its progress read at the first busy tick and 5 s later")
	require.Equal(t, "half of it", tk.Partial.Text, "its partial work, as the stream would have kept it")
	require.Equal(t, 1, tk.Progress.ToolCalls)
	tokens, cost := tk.Usage()
	require.Equal(t, int64(100), tokens.Input, "its spending so far, counted once")
	require.InDelta(t, 0.01, cost, 1e-9)

	eff := h.tick()
	eff = h.run(Event{Type: EventEffectDone, EffectID: ofKind(eff, EffectStatus)[0].ID, OK: true, Result: json.RawMessage(`{}`)})
	rd := ofKind(eff, EffectMessages)
	require.Len(t, rd, 1, "no longer busy: its messages are read")
	require.Zero(t, rd[0].Limit, "all of them")
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
	// The tick's status read, sent while it was still up, fails too.
	h.run(Event{Type: EventEffectDone, EffectID: ofKind(eff, EffectStatus)[0].ID, Error: "timed out after 5 s"})
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

// A tick whose worker answered the last status read does not ask its health as well: that answer
// said up. A failed read asks it at once, so a worker gone is down as soon as before, and the
// heartbeat asks it anyway, for the version the table shows.
func TestAPolledWorkerThatAnswersIsNotAskedItsHealthToo(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	r, _ := h.launchOn("a", "w1")
	tk := h.taskOf(r)
	h.idleParent()
	msgs := workingOn(tk.SessionID, tk.StartedAt, "half of it")

	require.Len(t, ofKind(h.busyTick(tk, msgs), EffectWorkerHealth), 1, "no read had answered yet")
	for range 3 {
		require.Empty(t, ofKind(h.busyTick(tk, msgs), EffectWorkerHealth), "its status read answered since the last tick")
	}

	eff := h.tick()
	require.Empty(t, ofKind(eff, EffectWorkerHealth))
	require.Len(t, ofKind(h.tick(), EffectWorkerHealth), 1, "the last tick's read is still out: its health is asked")
	h.healthErr["w1"] = "connection refused"
	eff = h.run(Event{Type: EventEffectDone, EffectID: ofKind(eff, EffectStatus)[0].ID, Error: "connection refused"})
	require.Len(t, ofKind(eff, EffectWorkerHealth), 1, "a failed read asks its health at once")
	require.False(t, h.m.workerUp("w1"), "and it is down at once")
	require.Len(t, ofKind(h.tick(), EffectWorkerHealth), 1, "down: its health is asked at each tick")

	delete(h.healthErr, "w1")
	eff = h.tick()
	require.True(t, h.m.workerUp("w1"))
	for _, st := range ofKind(eff, EffectStatus) { // the reads its coming back up made
		h.run(Event{Type: EventEffectDone, EffectID: st.ID, OK: true, Result: json.RawMessage(`{"` + tk.SessionID + `":{"type":"busy"}}`)})
	}
	h.busyTick(tk, msgs)
	require.Empty(t, ofKind(h.busyTick(tk, msgs), EffectWorkerHealth))
	h.now += 30_000
	require.Len(t, ofKind(h.run(Event{Type: EventTimer, TimerID: HeartbeatTimer}), EffectWorkerHealth), 1, "the heartbeat asks it for its version")

	h.busyTick(tk, msgs)
	eff = h.tick()
	eff = h.run(Event{Type: EventEffectDone, EffectID: ofKind(eff, EffectStatus)[0].ID, OK: true, Result: json.RawMessage(`"<html>sign in</html>"`)})
	require.Len(t, ofKind(eff, EffectWorkerHealth), 1, "an answer that holds no statuses is no word of its health")
}
