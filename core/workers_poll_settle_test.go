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

// subagentAtWork: a task on polled w1 whose child (its conversation running) runs subagent
// ses_sub, whose first read counted 50 input tokens beside the child's 100.
func subagentAtWork(t *testing.T) (h *wkHarness, tk *run, running string) {
	h = newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	tk = h.taskOf(first(h.launchOn("a", "w1")))
	running = leading(tk.SessionID, tk.StartedAt, "ses_sub", "running")
	rd := readsOf(h.childTick(tk, running), "ses_sub")
	require.Len(t, rd, 1)
	h.run(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true, Result: subSpent(tk.StartedAt, 50)})
	return h, tk, running
}

// requireCancelledUnsettled cancels tk and requires that its end asks for no settle read.
func (h *wkHarness) requireCancelledUnsettled(tk *run) {
	eff := h.cancelTask(tk)
	require.Equal(h.t, task.StatusCancelled, tk.Status)
	require.Empty(h.t, settleTimers(eff, tk))
}

// withStep is msgs (a child's conversation) with one more assistant message: input tokens spent
// in one step that ended.
func withStep(msgs string, id string, at int64, input int) string {
	return strings.TrimSuffix(msgs, "]") + fmt.Sprintf(`,{"info":{"id":%[1]q,"role":"assistant","finish":"tool-calls","time":{"created":%[2]d,"completed":%[2]d},"tokens":{"input":%[3]d,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0},
	 "parts":[{"id":"prt_%[1]s","type":"step-finish","reason":"tool-calls"}]}]`, id, at, input)
}

// subDone is subSpent with each message completed: a subagent whose turn is over.
func subDone(at int64, inputs ...int) json.RawMessage {
	return json.RawMessage(strings.ReplaceAll(string(subSpent(at, inputs...)), fmt.Sprintf(`"time":{"created":%d}`, at), fmt.Sprintf(`"time":{"created":%[1]d,"completed":%[1]d}`, at)))
}

// withAnswer is msgs (a child's conversation) with the answer that ends its turn, created at at.
func withAnswer(msgs string, at int64, text string) string {
	return strings.TrimSuffix(msgs, "]") + fmt.Sprintf(`,{"info":{"id":"msg_z","role":"assistant","finish":"stop","time":{"created":%d,"completed":%d}},"parts":[{"type":"text","text":%q}]}]`, at, at+1, text)
}

// A polled task cancelled between two progress reads: a second after its end, its child's whole
// conversation is read for what it spent since the last read, and its subagent, at work when the
// task was stopped, is read whole; what they show counts toward the ended task's record.
func TestACancelledPolledTaskCountsWhatItSpentLast(t *testing.T) {
	h, tk, running := subagentAtWork(t)
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
	// Since its last progress read the child made a step and began another subagent, in a step
	// the abort cut short, whose part it has not ended yet.
	last := withStep(running, "msg_b", tk.StartedAt+1, 60)
	last = strings.TrimSuffix(last, "]") + fmt.Sprintf(`,{"info":{"id":"msg_c","role":"assistant","time":{"created":%d},"error":{"name":"MessageAbortedError"},
	 "tokens":{"input":9,"output":0,"reasoning":0,"cache":{"read":0,"write":0}}},
	 "parts":[{"id":"prt_n","type":"tool","callID":"call_n","tool":"task","state":{"status":"running","metadata":{"sessionId":"ses_new"}}}]}]`, tk.StartedAt+2)
	eff = h.run(Event{Type: EventEffectDone, EffectID: child[0].ID, OK: true, Result: json.RawMessage(last)})
	fresh := readsOf(eff, "ses_new")
	require.Len(t, fresh, 1, "a subagent first seen now is read")
	require.Zero(t, fresh[0].Limit, "whole, though its part still runs: its task has ended")
	h.run(Event{Type: EventEffectDone, EffectID: sub[0].ID, OK: true, Result: subDone(tk.StartedAt, 50, 30)})
	h.run(Event{Type: EventEffectDone, EffectID: fresh[0].ID, OK: true, Result: json.RawMessage(strings.NewReplacer("msg_s", "msg_n", "prt_f", "prt_n").Replace(string(subDone(tk.StartedAt, 5))))})
	tokens, _ = tk.Usage()
	require.Equal(t, int64(254), tokens.Input, "100, 60 and the cut step's 9 of the child, 50 and 30 of its subagent, 5 of the new one, each once")
	require.Equal(t, 4, tk.Steps, "the child's step since the last read (not the one the abort cut short) and the subagents' three")
	require.Equal(t, task.StatusCancelled, tk.Status, "the figures change, not the outcome")
	require.Equal(t, "msg_c", tk.UsageMark(tk.SessionID).Message, "the record marks the newest message counted")

	eff = h.fire(settleTimerPrefix+tk.ID, h.now+polledSettleMs)
	require.Empty(t, ofKind(eff, EffectMessages), "read once: a timer that fires again asks nothing")
}

// A settle read that fails is asked again at the next settle timer, polledSettleTries timers in
// all, however many of its reads fail at each (its child's and a subagent's here); then the
// record keeps what was counted.
func TestAFailedSettleReadIsAskedAgainAFewTimes(t *testing.T) {
	h, tk, _ := subagentAtWork(t)
	timers := settleTimers(h.cancelTask(tk), tk)
	for try := 1; try <= polledSettleTries; try++ {
		require.Len(t, timers, 1, "timer %d", try)
		eff := h.fire(timers[0].TimerID, h.now+polledSettleMs)
		child, sub := readsOf(eff, tk.SessionID), readsOf(eff, "ses_sub")
		require.Len(t, child, 1, "read %d", try)
		require.Len(t, sub, 1, "read %d", try)
		timers = settleTimers(h.run(Event{Type: EventEffectDone, EffectID: child[0].ID, Error: "connection refused"}), tk)
		timers = append(timers, settleTimers(h.run(Event{Type: EventEffectDone, EffectID: sub[0].ID, Error: "connection refused"}), tk)...)
	}
	require.Empty(t, timers, "given up after %d timers", polledSettleTries)
	require.Empty(t, ofKind(h.fire(settleTimerPrefix+tk.ID, h.now+polledSettleMs), EffectMessages), "nothing is asked after that")
	tokens, _ := tk.Usage()
	require.Equal(t, int64(150), tokens.Input, "what the last progress read counted")
}

// A settle read answered after its task has ended again (a resumed run's end) says nothing of
// that end: it is dropped, and that end has a read of its own, though the earlier one was out
// when that end's timer fired.
func TestASettleReadOfAnEarlierEndIsDropped(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	h.childTick(tk, `[]`)
	stale := readsOf(h.fire(settleTimers(h.cancelTask(tk), tk)[0].TimerID, h.now+polledSettleMs), tk.SessionID)
	require.Len(t, stale, 1)
	tk.CompletedAt += 5_000 // as a resumed run's end would have it, and its settle
	h.m.settleOnEnd(tk)
	fresh := readsOf(h.fire(settleTimerPrefix+tk.ID, h.now+polledSettleMs), tk.SessionID)
	require.Len(t, fresh, 1, "the end now has its own read")
	conversation := withStep(`[{"info":{"id":"msg_u","role":"user","time":{"created":1}},"parts":[]}]`, "msg_b", tk.StartedAt+1, 60)
	eff := h.run(Event{Type: EventEffectDone, EffectID: stale[0].ID, OK: true, Result: json.RawMessage(conversation)})
	tokens, _ := tk.Usage()
	require.Zero(t, tokens.Input, "the read of the earlier end counts nothing")
	require.Empty(t, settleTimers(eff, tk), "nor takes one of the timers of the end now")
	require.Equal(t, 1, tk.settleTries)
	h.run(Event{Type: EventEffectDone, EffectID: fresh[0].ID, OK: true, Result: json.RawMessage(conversation)})
	tokens, _ = tk.Usage()
	require.Equal(t, int64(60), tokens.Input)
}

// A settle read still out holds up no read of a run that goes on (a resumed one's).
func TestASettleReadOutHoldsUpNoOtherRead(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	h.childTick(tk, `[]`)
	require.Len(t, readsOf(h.fire(settleTimers(h.cancelTask(tk), tk)[0].TimerID, h.now+polledSettleMs), tk.SessionID), 1)
	require.False(t, h.m.messagesAsked(tk.ID), "a run's reads go out whatever the settle read does")
}

// A whole read that is not its child's end (one a compaction asks for while the child goes on)
// and stops the task for its budget leaves what the child spends after it unread: a settle read
// follows.
func TestABudgetStopAtAReadThatIsNotTheEndIsSettled(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchArgs("a", `,"worker":"w1","budget":{"tokens":100}`)))
	h.childTick(tk, `[]`)
	h.m.checkTask(tk, false) // as a compaction's continuation has it read
	var read int64
	for id, p := range h.m.pending {
		if p.kind == EffectMessages && p.taskID == tk.ID && !p.progress {
			read = id
		}
	}
	require.NotZero(t, read)
	user := fmt.Sprintf(`[{"info":{"id":"msg_u","role":"user","time":{"created":%d}},"parts":[]}]`, tk.StartedAt)
	eff := h.run(Event{Type: EventEffectDone, EffectID: read, OK: true, Result: json.RawMessage(withStep(user, "msg_a", tk.StartedAt+1, 120))})
	require.Equal(t, task.StatusError, tk.Status, "past its budget of 100 tokens")
	require.Len(t, settleTimers(eff, tk), 1, "what it spent after that read is read a second later")
}

// A subagent's whole read counts its steps toward its task without stopping it for its step
// budget: it may have ended before its child answered (the child's own reads hold the budget).
func TestASubagentsWholeReadStopsNothingForSteps(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchArgs("a", `,"worker":"w1","budget":{"steps":3}`)))
	rd := readsOf(h.childTick(tk, leading(tk.SessionID, tk.StartedAt, "ses_sub", "completed")), "ses_sub")
	require.Len(t, rd, 1)
	require.Zero(t, rd[0].Limit, "its part ended: read whole")
	h.run(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true, Result: subDone(tk.StartedAt, 10, 10, 10)})
	require.Equal(t, 3, tk.Steps)
	require.Equal(t, task.StatusRunning, tk.Status)
}

// A task that ended by its whole conversation's read needs no settle read; a subagent's read
// that fails after that end is asked again at a settle timer, which reads nothing else.
func TestAFailedSubagentReadAfterItsTasksEndIsAskedAgain(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	answer := withAnswer(leading(tk.SessionID, tk.StartedAt, "ses_late", "completed"), tk.StartedAt+1, "done")
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
	h.run(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true, Result: subDone(tk.StartedAt, 40)})
	tokens, _ := tk.Usage()
	require.Equal(t, int64(140), tokens.Input)
}

// A followed task's stream told its spending as it came: its cancel reads nothing more.
func TestAFollowedTaskNeedsNoSettleRead(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	h.state("w1", true, "")
	h.requireCancelledUnsettled(h.taskOf(first(h.launchOn("a", "w1"))))
}

// A settle read that finds the child's turn still being written (the abort has not reached it)
// counts what it shows and reads the child again at the next settle timer; so is a subagent
// whose turn is still open read whole again, and only then taken as read.
func TestASettleReadOfATurnStillOpenIsAskedAgain(t *testing.T) {
	h, tk, running := subagentAtWork(t)
	eff := h.fire(settleTimers(h.cancelTask(tk), tk)[0].TimerID, h.now+polledSettleMs)
	child, sub := readsOf(eff, tk.SessionID), readsOf(eff, "ses_sub")
	require.Len(t, child, 1)
	require.Len(t, sub, 1)
	// The child's step since the last read, and one the abort has not reached yet.
	stepped := withStep(running, "msg_b", tk.StartedAt+1, 60)
	openStep := strings.TrimSuffix(stepped, "]") + fmt.Sprintf(`,{"info":{"id":"msg_c","role":"assistant","time":{"created":%d}},"parts":[]}]`, tk.StartedAt+2)
	eff = h.run(Event{Type: EventEffectDone, EffectID: child[0].ID, OK: true, Result: json.RawMessage(openStep)})
	eff = append(eff, h.run(Event{Type: EventEffectDone, EffectID: sub[0].ID, OK: true, Result: subSpent(tk.StartedAt, 50, 30)})...)
	timers := settleTimers(eff, tk)
	require.Len(t, timers, 1, "one timer for both: the child's turn and the subagent's still open")
	tokens, _ := tk.Usage()
	require.Equal(t, int64(240), tokens.Input, "what they showed counts already")

	eff = h.fire(timers[0].TimerID, h.now+polledSettleMs)
	child, sub = readsOf(eff, tk.SessionID), readsOf(eff, "ses_sub")
	require.Len(t, child, 1, "the child again")
	require.Len(t, sub, 1, "the subagent again")
	aborted := strings.Replace(openStep, `"id":"msg_c","role":"assistant",`, `"id":"msg_c","role":"assistant","error":{"name":"MessageAbortedError"},`, 1)
	h.run(Event{Type: EventEffectDone, EffectID: child[0].ID, OK: true, Result: json.RawMessage(aborted)})
	eff = h.run(Event{Type: EventEffectDone, EffectID: sub[0].ID, OK: true, Result: subDone(tk.StartedAt, 50, 30)})
	require.Empty(t, settleTimers(eff, tk), "both read to the end")
	tokens, _ = tk.Usage()
	require.Equal(t, int64(240), tokens.Input)
	require.Equal(t, 3, tk.Steps, "the child's since the last read, the subagent's two")
	require.Empty(t, ofKind(h.fire(settleTimerPrefix+tk.ID, h.now+polledSettleMs), EffectMessages))
}

// A polled task's end read counts every step its child made before it went idle, past its step
// budget too: the child answered, and its answer is the result (as its spending's is). Its end
// read read everything: no settle read follows.
func TestAPolledEndReadPastTheStepBudgetKeepsTheAnswer(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchArgs("a", `,"worker":"w1","budget":{"steps":1}`)))
	user := fmt.Sprintf(`[{"info":{"id":"msg_u","role":"user","time":{"created":%d}},"parts":[]}]`, tk.StartedAt)
	answer := withAnswer(withStep(withStep(user, "msg_a", tk.StartedAt+1, 100), "msg_b", tk.StartedAt+2, 60), tk.StartedAt+3, "done")
	eff := h.idleTick(answer)
	require.Equal(t, task.StatusCompleted, tk.Status, "%+v", tk.Error)
	require.Equal(t, "done", tk.Result)
	require.Equal(t, 2, tk.Steps)
	tokens, _ := tk.Usage()
	require.Equal(t, int64(160), tokens.Input)
	require.Empty(t, settleTimers(eff, tk))
}

// A task whose worker is down when it ends gets no settle read: nothing there can answer, and
// the record keeps the last read's figures.
func TestAPolledTaskEndedWhileItsWorkerIsDownGetsNoSettleRead(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	h.childTick(tk, `[]`)
	h.run(Event{Type: EventWorkerState, Worker: "w1", Up: false, Error: "connection refused"})
	require.False(t, h.m.workerUp("w1"))
	h.requireCancelledUnsettled(tk)
}

// Each end of a task has its settle timers: a run resumed after its first end used them all up
// gets its own when it ends.
func TestAResumedRunsEndHasItsOwnSettleTimers(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	answer := withAnswer(leading(tk.SessionID, tk.StartedAt, "ses_late", "completed"), tk.StartedAt+1, "done")
	rd := readsOf(h.idleTick(answer), "ses_late")
	require.Equal(t, task.StatusCompleted, tk.Status)
	for try := 0; try <= polledSettleTries; try++ { // the read its end asked, then one a timer
		require.Len(t, rd, 1, "read %d", try)
		timers := settleTimers(h.run(Event{Type: EventEffectDone, EffectID: rd[0].ID, Error: "connection reset"}), tk)
		if try == polledSettleTries {
			require.Empty(t, timers, "its end's timers used up")
			break
		}
		rd = readsOf(h.fire(timers[0].TimerID, h.now+polledSettleMs), "ses_late")
	}

	eff := h.run(Event{Type: EventToolCall, CallID: "call_resume", Tool: ToolTask, SessionID: "ses_p", MessageID: "msg_p2",
		Args: json.RawMessage(fmt.Sprintf(`{"resume":%q,"prompt":"more"}`, tk.ID))})
	get := ofKind(eff, EffectSessionGet)
	require.Len(t, get, 1)
	h.run(Event{Type: EventEffectDone, EffectID: get[0].ID, OK: true, Result: json.RawMessage(fmt.Sprintf(`{"id":%q}`, tk.SessionID))})
	require.Equal(t, task.StatusResumed, tk.Status)
	h.now += 1_000
	require.Len(t, settleTimers(h.cancelTask(tk), tk), 1, "the resumed run's end reads what it spent last")
}
