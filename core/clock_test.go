package core

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
)

// What the core makes of the sessions it created on a worker: each bounds the worker's clock
// minus ours between created - answeredAt and created - askedAt.
func TestWorkerClockOffset(t *testing.T) {
	type seen struct{ created, asked, answered int64 }
	for _, tc := range []struct {
		name string
		seen []seen
		want int64
	}{
		{"nothing seen", nil, 0},
		{"in step: created between ask and answer", []seen{{1_050, 1_000, 1_100}}, 0},
		{"in step within a slow round trip", []seen{{1_000, 1_000, 3_000}, {5_010, 5_000, 5_020}}, 0},
		{"a minute behind", []seen{{-59_000 + 1_050, 1_000, 1_100}}, -59_000},
		{"two hours ahead", []seen{{7_200_000 + 1_050, 1_000, 1_100}}, 7_200_000},
		// [-60_100, -59_000] then [-60_010, -59_990]: the second narrows the first.
		{"narrowed", []seen{{1_000 - 59_000, 1_000, 2_100}, {5_000 - 59_990, 5_000, 5_020}}, -60_000},
		// [-60_050, -59_950], then the worker's clock is set right: [-50, 50] does not meet it.
		{"set right since", []seen{{1_000 - 60_000, 950, 1_050}, {9_000, 8_950, 9_050}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMachine(twoWorkers(nil))
			const epoch = 1_795_000_000_000 // ms: times as clocks give them
			for _, s := range tc.seen {
				m.noteWorkerClock("w1", epoch+s.created, epoch+s.asked, epoch+s.answered)
			}
			require.Equal(t, tc.want, m.workerClockOffset("w1"))
			require.Zero(t, m.workerClockOffset("w2"), "one worker's clock is its own")
		})
	}
}

// A child on a worker whose clock is a minute behind ours is steered: its answer to the message,
// stamped by the worker's clock, is the task's result. Read against our clock it looked a minute
// older than the message, and the task failed with no answer.
func TestASteeredChildOnAWorkerBehindEndsWithItsAnswer(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	h.clockOff = map[string]int64{"w1": -60_000}
	h.run(Event{Type: EventStart})
	h.state("w1", true, "")
	r, _ := h.launchOn("a", "w1")
	tk := h.taskOf(r)
	h.from("w1", "session.status", fmt.Sprintf(`{"sessionID":%q,"status":{"type":"busy"}}`, tk.SessionID))
	h.now += 1_000
	eff := h.run(Event{Type: EventToolCall, CallID: "call_m", Tool: ToolMessage, SessionID: "ses_p",
		Args: json.RawMessage(`{"task_id":"` + tk.ID + `","message":"also the README"}`)})
	require.Len(t, prompts(eff, tk.SessionID), 1)
	// The first answer, begun before the message (worker's clock), is stale; the next one is not.
	h.now += 500
	stale := h.now - 60_000 - 1_000
	h.from("w1", "message.updated", fmt.Sprintf(`{"info":{"id":"msg_old","sessionID":%q,"role":"assistant","finish":"stop","time":{"created":%d,"completed":%d}}}`, tk.SessionID, stale, stale+900))
	require.Equal(t, task.StatusRunning, tk.Status)
	h.now += 500
	at := h.now - 60_000
	h.from("w1", "message.part.updated", fmt.Sprintf(`{"part":{"id":"prt_n","sessionID":%q,"messageID":"msg_new","type":"text","text":"the README too","time":{"end":%d}}}`, tk.SessionID, at+2))
	h.from("w1", "message.updated", fmt.Sprintf(`{"info":{"id":"msg_new","sessionID":%q,"role":"assistant","finish":"stop","time":{"created":%d,"completed":%d}}}`, tk.SessionID, at, at+2))
	eff = h.from("w1", "session.idle", fmt.Sprintf(`{"sessionID":%q}`, tk.SessionID))
	if rd := ofKind(eff, EffectMessages); len(rd) == 1 {
		h.run(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true, Result: json.RawMessage(fmt.Sprintf(`[
			{"info":{"id":"msg_u","role":"user","time":{"created":%d}}},
			{"info":{"id":"msg_old","role":"assistant","finish":"stop","time":{"created":%d,"completed":%d}},"parts":[{"type":"text","text":"stale"}]},
			{"info":{"id":"msg_u2","role":"user","time":{"created":%d}}},
			{"info":{"id":"msg_new","role":"assistant","finish":"stop","time":{"created":%d,"completed":%d}},"parts":[{"type":"text","text":"the README too"}]}]`,
			stale-100, stale, stale+900, at-10, at, at+2))})
	}
	require.Equal(t, task.StatusCompleted, tk.Status, "%+v", tk.Error)
	require.Equal(t, "the README too", tk.Result)
}

// What the core makes of a worker's health answers: the Date header, a whole second and maybe the
// one before, bounds the worker's clock minus ours between date - answeredAt and
// date + 1999 - askedAt.
func TestWorkerClockFromHealthDates(t *testing.T) {
	const epoch = 1_795_000_000_000 // ms, a whole second
	for _, tc := range []struct {
		name string
		off  int64 // the worker's clock minus ours; its Date reads a whole second
		late int64 // how far behind its clock the Date it writes is (a header made a second before)
	}{
		{"in step", 0, 0},
		{"in step, its Date a second old", 0, 1_000},
		{"an hour behind", -3_600_000, 0},
		{"two minutes ahead", 120_000, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMachine(twoWorkers(nil))
			// Asked at 1.000 s, answered at 1.100 s (ours): the Date is the second the worker's
			// clock was in somewhere in between, or the one before, so the offset is known within
			// [-100, 1999] of it.
			m.noteWorkerDate("w1", epoch+1_000+tc.off-tc.late, epoch+1_000, epoch+1_100)
			off := m.workerClockOffset("w1")
			if tc.off == 0 {
				require.Zero(t, off, "a range that holds 0 moves no mark")
				return
			}
			require.GreaterOrEqual(t, off, tc.off-100)
			require.LessOrEqual(t, off, tc.off+1_999)
		})
	}
	// A session created there afterwards, on a slow round trip, meets the two-second range: an
	// hour behind, the Date asked at 1.5 s reads the second -3,599 s, [-3,600,600, -3,598,501];
	// the session asked at 5 s and answered at 6 s was made at 5.5 s, [-3,600,500, -3,599,500].
	m := NewMachine(twoWorkers(nil))
	m.noteWorkerDate("w1", epoch-3_599_000, epoch+1_500, epoch+1_600)
	m.noteWorkerClock("w1", epoch+5_500-3_600_000, epoch+5_000, epoch+6_000)
	require.Equal(t, clockRange{lo: -3_600_500, hi: -3_599_500}, m.workerClocks["w1"])
}

// After a restart the core knows nothing of a worker's clock until a session is made there; the
// health answer that follows its stream's connect says it, so a restored task's steer is read on
// the worker's clock at once.
func TestAWorkersHealthDateSetsItsClock(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	h.now = 1_795_000_000_000 // ms since the epoch, as Date headers give it
	h.run(Event{Type: EventStart})
	eff := h.step(Event{Type: EventWorkerState, Worker: "w1", Up: true}) // the health ask left open
	asks := ofKind(eff, EffectWorkerHealth)
	require.Len(t, asks, 1)
	require.Zero(t, h.m.workerClockOffset("w1"))
	h.now += 20
	date := (h.now-3_600_000)/1_000*1_000 - 1_000 // the worker's clock an hour behind, as a Date gives it
	h.step(Event{Type: EventEffectDone, EffectID: asks[0].ID, OK: true,
		Result: json.RawMessage(fmt.Sprintf(`{"healthy":true,"version":"1.18.33","date":%d}`, date+1_000))})
	off := h.m.workerClockOffset("w1")
	require.InDelta(t, -3_600_000, off, 1_100, "read within its Date's seconds")
	require.Zero(t, h.m.workerClockOffset("w2"))
}
