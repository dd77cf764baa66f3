package core

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// cancelTask cancels tk through asyncagents_cancel, returning the effects.
func (h *wkHarness) cancelTask(tk *run) []Effect {
	return h.run(Event{Type: EventToolCall, CallID: "call_cancel_" + tk.ID, Tool: ToolCancel, SessionID: "ses_p", MessageID: "msg_p",
		Args: json.RawMessage(fmt.Sprintf(`{"task_id":%q}`, tk.ID))})
}

// settleTimers are the settle timers tk's end set among eff.
func settleTimers(eff []Effect, tk *run) []Effect {
	var out []Effect
	for _, e := range ofKind(eff, EffectTimerSet) {
		if e.TimerID == settleTimerPrefix+tk.ID {
			out = append(out, e)
		}
	}
	return out
}

// withStep is msgs (a child's conversation) with one more assistant message: input tokens spent
// in one step that ended.
func withStep(msgs string, id string, at int64, input int) string {
	return strings.TrimSuffix(msgs, "]") + fmt.Sprintf(`,{"info":{"id":%[1]q,"role":"assistant","time":{"created":%[2]d},"tokens":{"input":%[3]d,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0},
	 "parts":[{"id":"prt_%[1]s","type":"step-finish","reason":"tool-calls"}]}]`, id, at, input)
}

// A polled task cancelled between two progress reads: a second after its end, its child's whole
// conversation is read for what it spent since the last read, and its subagent, at work when the
// task was stopped, is read whole; what they show counts toward the ended task's record.
func TestACancelledPolledTaskCountsWhatItSpentLast(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	running := leading(tk.SessionID, tk.StartedAt, "ses_sub", "running")
	rd := readsOf(h.childTick(tk, running), "ses_sub")
	require.Len(t, rd, 1)
	h.run(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true, Result: subSpent(tk.StartedAt, 50)})
	tokens, _ := tk.Usage()
	require.Equal(t, int64(150), tokens.Input)

	eff := h.cancelTask(tk)
	require.Equal(t, task.StatusCancelled, tk.Status)
	timers := settleTimers(eff, tk)
	require.Len(t, timers, 1, "its last spending is read after its end")
	require.Equal(t, int64(polledSettleMs), timers[0].DelayMs)
	require.Empty(t, readsOf(eff, tk.SessionID), "not at once: the abort has not reached the child yet")

	eff = h.fire(timers[0].TimerID, h.now+polledSettleMs)
	child, sub := readsOf(eff, tk.SessionID), readsOf(eff, "ses_sub")
	require.Len(t, child, 1)
	require.Zero(t, child[0].Limit, "the child's whole conversation")
	require.Equal(t, "w1", child[0].Worker)
	require.Len(t, sub, 1, "the subagent, at work when its task was stopped")
	require.Zero(t, sub[0].Limit, "read whole")
	// Since its last progress read the child made a step and began another subagent, whose part
	// the abort has not ended yet.
	last := withStep(running, "msg_b", tk.StartedAt+1, 60)
	last = strings.TrimSuffix(last, "]") + fmt.Sprintf(`,{"info":{"id":"msg_c","role":"assistant","time":{"created":%d}},
	 "parts":[{"id":"prt_n","type":"tool","callID":"call_n","tool":"task","state":{"status":"running","metadata":{"sessionId":"ses_new"}}}]}]`, tk.StartedAt+2)
	eff = h.run(Event{Type: EventEffectDone, EffectID: child[0].ID, OK: true, Result: json.RawMessage(last)})
	fresh := readsOf(eff, "ses_new")
	require.Len(t, fresh, 1, "a subagent first seen now is read")
	require.Zero(t, fresh[0].Limit, "whole, though its part still runs: its task has ended")
	h.run(Event{Type: EventEffectDone, EffectID: sub[0].ID, OK: true, Result: subSpent(tk.StartedAt, 50, 30)})
	h.run(Event{Type: EventEffectDone, EffectID: fresh[0].ID, OK: true, Result: json.RawMessage(strings.NewReplacer("msg_s", "msg_n", "prt_f", "prt_n").Replace(string(subSpent(tk.StartedAt, 5))))})
	tokens, _ = tk.Usage()
	require.Equal(t, int64(245), tokens.Input, "100 and 60 of the child, 50 and 30 of its subagent, 5 of the new one, each once")
	require.Equal(t, 4, tk.Steps, "the child's step since the last read and the subagents' three")
	require.Equal(t, task.StatusCancelled, tk.Status, "the figures change, not the outcome")
	require.Equal(t, "msg_b", tk.UsageMark(tk.SessionID).Message, "the record keeps its mark")

	eff = h.fire(settleTimerPrefix+tk.ID, h.now+polledSettleMs)
	require.Empty(t, ofKind(eff, EffectMessages), "read once: a timer that fires again asks nothing")
}

// A settle read that fails is asked again at the next settle timer, polledSettleTries timers in
// all; then the record keeps what was counted.
func TestAFailedSettleReadIsAskedAgainAFewTimes(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	h.childTick(tk, `[]`)
	timers := settleTimers(h.cancelTask(tk), tk)
	for try := 1; try <= polledSettleTries; try++ {
		require.Len(t, timers, 1, "timer %d", try)
		child := readsOf(h.fire(timers[0].TimerID, h.now+polledSettleMs), tk.SessionID)
		require.Len(t, child, 1, "read %d", try)
		timers = settleTimers(h.run(Event{Type: EventEffectDone, EffectID: child[0].ID, Error: "connection refused"}), tk)
	}
	require.Empty(t, timers, "given up after %d timers", polledSettleTries)
	require.Zero(t, tk.Steps)
}

// A task that ended by its whole conversation's read needs no settle read; a subagent's read
// that fails after that end is asked again at a settle timer, which reads nothing else.
func TestAFailedSubagentReadAfterItsTasksEndIsAskedAgain(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	answer := strings.TrimSuffix(leading(tk.SessionID, tk.StartedAt, "ses_late", "completed"), "]") +
		fmt.Sprintf(`,{"info":{"id":"msg_z","role":"assistant","finish":"stop","time":{"created":%d,"completed":%d}},"parts":[{"type":"text","text":"done"}]}]`, tk.StartedAt+1, tk.StartedAt+2)
	eff := h.idleTick(answer)
	require.Equal(t, task.StatusCompleted, tk.Status)
	require.Empty(t, settleTimers(eff, tk), "its end read read everything")
	rd := readsOf(eff, "ses_late")
	require.Len(t, rd, 1)
	timers := settleTimers(h.run(Event{Type: EventEffectDone, EffectID: rd[0].ID, Error: "connection reset"}), tk)
	require.Len(t, timers, 1, "no progress read will ask again: the settle timer does")
	eff = h.fire(timers[0].TimerID, h.now+polledSettleMs)
	require.Empty(t, readsOf(eff, tk.SessionID), "the child was read whole at its end")
	rd = readsOf(eff, "ses_late")
	require.Len(t, rd, 1)
	require.Zero(t, rd[0].Limit)
	h.run(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true, Result: subSpent(tk.StartedAt, 40)})
	tokens, _ := tk.Usage()
	require.Equal(t, int64(140), tokens.Input)
}

// A followed task's stream told its spending as it came: its cancel reads nothing more.
func TestAFollowedTaskNeedsNoSettleRead(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	h.state("w1", true, "")
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	eff := h.cancelTask(tk)
	require.Equal(t, task.StatusCancelled, tk.Status)
	require.Empty(t, settleTimers(eff, tk))
}
