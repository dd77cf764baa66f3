package core

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/stretchr/testify/require"
)

// threeOnW1 is polledW1 with room for three tasks on w1.
func threeOnW1(c *config.Config) {
	w := c.Workers["w1"]
	w.MaxTasks = 3
	c.Workers["w1"] = w
}

// answered is an end read's answer: the child's last answer, text.
func answered(created int64, text string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`[{"info":{"id":"msg_e%d","role":"assistant","finish":"stop","time":{"created":%d,"completed":%d}},"parts":[{"type":"text","text":%q}]}]`,
		created, created, created+1, text))
}

// endReads fires w1's tick and answers its status read with none busy: the end reads it asks.
func (h *wkHarness) endReads() []Effect {
	eff := h.tick()
	for _, pl := range ofKind(eff, EffectPermissionList) {
		h.listed(pl, `[]`)
	}
	st := ofKind(eff, EffectStatus)
	require.Len(h.t, st, 1)
	return ofKind(h.run(Event{Type: EventEffectDone, EffectID: st[0].ID, OK: true, Result: json.RawMessage(`{}`)}), EffectMessages)
}

// The ends one tick finds are told in one message: each end read's answer waits for the others.
func TestTheEndsOneTickFindsAreToldTogether(t *testing.T) {
	h := newWK(t, polledW1(threeOnW1))
	h.run(Event{Type: EventStart})
	for _, d := range []string{"a", "b", "c"} {
		h.taskOf(first(h.launchOn(d, "w1")))
	}
	h.idleParent()
	reads := h.endReads()
	require.Len(t, reads, 3, "the three ended: each one's messages are read")

	for i, rd := range reads[:2] {
		eff := h.run(Event{Type: EventEffectDone, EffectID: rd.ID, OK: true, Result: answered(h.now, fmt.Sprint("answer ", i))})
		require.Empty(t, parentNotices(eff), "read %d: another end read is out, the notice waits", i)
		require.Len(t, timersNamed(eff, gatherTimerPrefix+"ses_p"), 1-i, "a timer bounds the wait, from its start")
	}
	eff := h.run(Event{Type: EventEffectDone, EffectID: reads[2].ID, OK: true, Result: answered(h.now, "answer 2")})
	notes := parentNotices(eff)
	require.Len(t, notes, 1, "the last read's answer sends all three, in one message")
	require.Len(t, notes[0].TaskIDs, 3)
	require.NotEmpty(t, ofKind(eff, EffectTimerClear), "the bound's timer is cleared")
}

// A read that does not come back holds the others' notices no longer than polledGatherMs.
func TestAHangingEndReadHoldsTheNoticesABoundedTime(t *testing.T) {
	for _, deleted := range []bool{false, true} {
		t.Run(fmt.Sprint("parent deleted: ", deleted), func(t *testing.T) { hangingEndRead(t, deleted) })
	}
}

// oneOfTwoEndReadsAnswered: two tasks of ses_p on polled w1 went quiet, their end reads asked, and
// task a's read answered with its answer; it returns a and what its answer brought.
func oneOfTwoEndReadsAnswered(t *testing.T) (*wkHarness, *run, []Effect) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	a := h.taskOf(first(h.launchOn("a", "w1")))
	h.taskOf(first(h.launchOn("b", "w1")))
	h.idleParent()
	reads := h.endReads()
	require.Len(t, reads, 2)
	return h, a, h.run(Event{Type: EventEffectDone, EffectID: reads[0].ID, OK: true, Result: answered(h.now, "a's answer")})
}

// hangingEndRead: one end read answers, the other hangs; the parent may be deleted meanwhile.
func hangingEndRead(t *testing.T, deleted bool) {
	h, a, eff := oneOfTwoEndReadsAnswered(t)
	require.Empty(t, parentNotices(eff))
	timer := timersNamed(eff, gatherTimerPrefix+"ses_p")
	require.Len(t, timer, 1)
	require.Equal(t, int64(polledGatherMs), timer[0].DelayMs, "the wait's bound")

	if deleted {
		eff = h.run(Event{Type: EventOpenCode, Event: &OpenCodeEvent{Type: "session.deleted", Properties: json.RawMessage(`{"info":{"id":"ses_p"}}`)}})
		require.Empty(t, h.m.gathering, "a parent gone holds nothing")
		require.NotEmpty(t, ofKind(eff, EffectTimerClear))
		return
	}
	h.now += polledGatherMs
	eff = h.run(Event{Type: EventTimer, TimerID: gatherTimerPrefix + "ses_p"})
	notes := parentNotices(eff)
	require.Len(t, notes, 1, "the other read is old: a's notice goes alone")
	require.Equal(t, a.ID, notes[0].TaskID)
	require.Empty(t, notes[0].TaskIDs, "it tells of one task")
}

// A status read out on a polled worker that holds a task of the parent holds the parent's end
// notices too, even one from a followed worker; a read of another parent's worker does not.
func TestAPolledStatusReadHoldsItsParentsNotices(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	h.state("w2", true, "")
	b := h.taskOf(first(h.launchOn("b", "w1")))
	a := h.taskOf(first(h.launchOn("a", "w2")))
	h.idleParent()
	eff := h.tick()
	st := ofKind(eff, EffectStatus)
	require.Len(t, st, 1)

	eff = h.answerOn("w2", a.SessionID, "a's answer")
	for _, rd := range ofKind(eff, EffectMessages) {
		eff = append(eff, h.run(Event{Type: EventEffectDone, EffectID: rd.ID, OK: true, Result: answered(h.now, "a's answer")})...)
	}
	require.Equal(t, "a's answer", a.Result)
	require.Empty(t, parentNotices(eff), "w1's status read may end b: a's notice waits")

	eff = h.run(Event{Type: EventEffectDone, EffectID: st[0].ID, OK: true, Result: json.RawMessage(fmt.Sprintf(`{%q:{"type":"busy"}}`, b.SessionID))})
	notes := parentNotices(eff)
	require.Len(t, notes, 1, "b is busy: a's notice goes with nothing out")
	require.Equal(t, a.ID, notes[0].TaskID)
}

// Workers polled alike tick together: a tick is armed for the next multiple of pollMs.
func TestPolledWorkersTickOnTheirPollGrid(t *testing.T) {
	h := newWK(t, polledW1(nil))
	timer := timersNamed(h.m.Step(1_700_000_000_250, Event{Type: EventStart}), workerPollPrefix+"w1")
	require.Len(t, timer, 1)
	require.Equal(t, int64(750), timer[0].DelayMs)
	timer = timersNamed(h.m.Step(1_700_000_001_010, Event{Type: EventTimer, TimerID: workerPollPrefix + "w1"}), workerPollPrefix+"w1")
	require.Len(t, timer, 1)
	require.Equal(t, int64(990), timer[0].DelayMs, "a tick that fired late is not late again")
	timer = timersNamed(h.m.Step(1_700_000_001_999, Event{Type: EventTimer, TimerID: workerPollPrefix + "w1"}), workerPollPrefix+"w1")
	require.Equal(t, int64(1001), timer[0].DelayMs, "one that fired a little early does not tick twice")
}

// Reads that follow one another (ticks that keep finding ends) hold a parent's notices no
// longer than polledGatherMs from the wait's start.
func TestOverlappingReadsHoldTheNoticesABoundedTime(t *testing.T) {
	h := newWK(t, polledW1(threeOnW1))
	h.run(Event{Type: EventStart})
	a := h.taskOf(first(h.launchOn("a", "w1")))
	h.taskOf(first(h.launchOn("b", "w1")))
	h.taskOf(first(h.launchOn("c", "w1")))
	h.idleParent()
	reads := h.endReads()
	require.Len(t, reads, 3)
	eff := h.run(Event{Type: EventEffectDone, EffectID: reads[0].ID, OK: true, Result: answered(h.now, "a's answer")})
	require.Empty(t, parentNotices(eff), "held")
	busy := json.RawMessage(fmt.Sprintf(`{%q:{"type":"busy"},%q:{"type":"busy"}}`, h.m.task(reads[1].TaskID).SessionID, h.m.task(reads[2].TaskID).SessionID))
	for i := range 3 { // fresh reads keep coming: one is always out, and under 1 s old
		h.now += polledGatherMs / 4
		h.m.pending[int64(9000+i)] = pending{kind: EffectStatus, worker: "w1", at: h.m.now}
		if i > 0 {
			eff := h.run(Event{Type: EventEffectDone, EffectID: int64(9000 + i - 1), OK: true, Result: busy})
			require.Empty(t, parentNotices(eff), "still within the bound: held")
		}
	}
	h.now += polledGatherMs / 4
	notes := parentNotices(h.run(Event{Type: EventTimer, TimerID: gatherTimerPrefix + "ses_p"}))
	require.Len(t, notes, 1, "the wait's bound: a's notice goes, reads or not")
	require.Equal(t, a.ID, notes[0].TaskID)
}

// Which reads hold which notices: only a parent's end notices, only for reads out on a polled
// worker that may end one of its tasks, and only while they are young.
func TestWhichReadsHoldAParentsNotices(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	h.state("w2", true, "")
	b := h.taskOf(first(h.launchOn("b", "w1")))
	h.taskOf(first(h.launchOn("d", "w2")))
	eff := h.run(Event{Type: EventToolCall, CallID: "call_q", Tool: ToolTask, SessionID: "ses_q", MessageID: "msg_q",
		Args: json.RawMessage(`{"description":"c","prompt":"work","agent":"general","worker":"w1"}`)})
	c := h.taskOf(ofKind(eff, EffectToolReply)[0])
	require.Equal(t, "ses_q", c.ParentSessionID)
	end := []notice{{end: &batchCounts{}}}
	endAndStall := []notice{{end: &batchCounts{}}, {stalledSince: 1}}
	now := h.m.now
	for _, tc := range []struct {
		name   string
		p      pending
		queue  []notice
		waited int64 // how long ago the parent's wait began (0: none)
		holds  bool
	}{
		{"a status read of the polled worker", pending{kind: EffectStatus, worker: "w1", at: now}, end, 0, true},
		{"... with a stall's line queued too", pending{kind: EffectStatus, worker: "w1", at: now}, endAndStall, 0, false},
		{"... for a stall's line alone", pending{kind: EffectStatus, worker: "w1", at: now}, []notice{{stalledSince: 1}}, 0, false},
		{"... in a wait begun just under polledGatherMs ago", pending{kind: EffectStatus, worker: "w1", at: now}, end, polledGatherMs - 1, true},
		{"... in a wait begun polledGatherMs ago", pending{kind: EffectStatus, worker: "w1", at: now}, end, polledGatherMs, false},
		{"... for a reconcile", pending{kind: EffectStatus, worker: "w1", at: now, reconcile: []string{b.ID}}, end, 0, false},
		{"a status read of the followed worker", pending{kind: EffectStatus, worker: "w2", at: now}, end, 0, false},
		{"the end read of its task", pending{kind: EffectMessages, taskID: b.ID, at: now}, end, 0, true},
		{"a progress read of its task", pending{kind: EffectMessages, taskID: b.ID, progress: true, at: now}, end, 0, false},
		{"a read of its task's subagent", pending{kind: EffectMessages, taskID: b.ID, sub: "ses_sub", at: now}, end, 0, false},
		{"a fork's read of the parent", pending{kind: EffectMessages, taskID: b.ID, fork: true, at: now}, end, 0, false},
		{"a restored task's read", pending{kind: EffectMessages, taskID: b.ID, restored: true, at: now}, end, 0, false},
		{"the end read of another parent's task", pending{kind: EffectMessages, taskID: c.ID, at: now}, end, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.m.pending = map[int64]pending{1: tc.p}
			h.m.gathering = nil
			if tc.waited > 0 {
				h.m.gathering = map[string]int64{"ses_p": now - tc.waited}
			}
			require.Equal(t, tc.holds, h.m.awaitsPolledReads("ses_p", tc.queue))
		})
	}
	h.m.gathering = nil
	h.m.pending = map[int64]pending{1: {kind: EffectStatus, worker: "w1", at: now}}
	h.m.cancel(b, "test")
	require.False(t, h.m.awaitsPolledReads("ses_p", end), "w1 holds no task of ses_p now")
}

// A box dropped while its parent's wait is on (its notices given up) ends the wait: nothing is
// left to look at again.
func TestADroppedBoxEndsItsParentsWait(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.m.outbox.Box("ses_x")
	h.m.gathering = map[string]int64{"ses_x": 1}
	h.m.dropBox("ses_x")
	require.Empty(t, h.m.gathering)
	require.Nil(t, h.m.outbox.Get("ses_x"))
}

// A gather timer that fires a little early ends the wait all the same.
func TestAnEarlyGatherTimerEndsTheWait(t *testing.T) {
	h, a, _ := oneOfTwoEndReadsAnswered(t)
	since := h.m.gathering["ses_p"]
	notes := parentNotices(h.m.Step(since+polledGatherMs-2, Event{Type: EventTimer, TimerID: gatherTimerPrefix + "ses_p"}))
	require.Len(t, notes, 1)
	require.Equal(t, a.ID, notes[0].TaskID)
}
