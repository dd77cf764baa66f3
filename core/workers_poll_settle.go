package core

import (
	"maps"
	"slices"

	"github.com/asyncagents/asyncagents/core/ocevents"
)

// A polled task's last spending (docs/rationale/workers_polled.md). A polled task's spending is
// read, not streamed: its child's newest messages every few seconds, its whole conversation at
// its end. A task that ends without that end read (cancelled, past its deadline or its budget,
// its worker lost) has had none of what its child and its subagents spent since their last
// progress read counted: up to polledProgressEveryMs of their work, and every subagent still at
// work. So, polledSettleMs after such an end (the abort has reached the child by then, and
// OpenCode has written what the aborted step spent), the child's whole conversation is read once,
// for its spending and its subagents, each of which is then read whole too. A read that fails
// (the worker busy or unreachable for a moment) is asked again at the next settle timer, at most
// polledSettleTries timers in all: after that the record keeps what was counted, as a worker that
// is gone cannot say more.

const (
	// polledSettleMs is how long after a polled task's end its last spending is read.
	polledSettleMs = 1_000
	// polledSettleTries bounds the settle timers of one task.
	polledSettleTries = 3
)

// settleTimerPrefix names the timer that reads what a polled task spent last.
const settleTimerPrefix = "polled.settle:"

// settleOnEnd arms t's settle timer as it ends, unless its end came from its whole conversation
// read just now (its subagents' reads, asked by that read, arm it if they fail).
func (m *Machine) settleOnEnd(t *run) {
	if !m.polled(t.Worker) || t.SessionID == "" || t.polledEndRead {
		return
	}
	t.polledSettling = true
	m.armSettle(t)
}

// armSettle sets t's settle timer, unless it has had all of them.
func (m *Machine) armSettle(t *run) {
	if t.settleTries >= polledSettleTries {
		m.log("warn", "gave up reading what task "+t.ID+" spent last on worker "+t.Worker+": its counts stay as they were")
		return
	}
	t.settleTries++
	m.emit(Effect{Kind: EffectTimerSet, TimerID: settleTimerPrefix + t.ID, DelayMs: polledSettleMs})
}

// onSettleTimer asks for what is still unread of an ended polled task: its child's whole
// conversation, when it was not read since the end, and each subagent not yet read whole.
func (m *Machine) onSettleTimer(id string) {
	t := m.task(id)
	if t == nil || !t.Status.Terminal() {
		return
	}
	if t.polledSettling && !m.settleAsked(t.ID) {
		m.request(Effect{Kind: EffectMessages, SessionID: t.SessionID, TaskID: t.ID}, pending{taskID: t.ID, settle: true})
	}
	for _, sub := range slices.Sorted(maps.Keys(t.polledSubs)) {
		s := t.polledSubs[sub]
		s.running = false // its task ended: whatever its part said, it is read whole
		m.readPolledSub(t, sub, s)
	}
}

// settleAsked reports whether a settle read of t's child is out.
func (m *Machine) settleAsked(id string) bool {
	for _, p := range m.pending {
		if p.settle && p.taskID == id {
			return true
		}
	}
	return false
}

// onSettleMessages counts what an ended polled task's child spent, as its last read shows, and
// has its subagents read whole. Its steps are counted as spending, not held to a budget: the task
// has ended.
func (m *Machine) onSettleMessages(p pending, ev Event) {
	t := m.task(p.taskID)
	if t == nil || !t.polledSettling {
		return
	}
	if !ev.OK {
		m.log("warn", "could not read what task "+t.ID+" spent last: "+ev.Error)
		m.armSettle(t)
		return
	}
	msgs, err := ocevents.DecodeMessages(ev.Result)
	if err != nil {
		m.log("warn", "unreadable messages for task "+t.ID+": "+err.Error())
		return
	}
	t.polledSettling = false
	since := m.ocTime(t, max(t.attemptAt, t.ResumedAt))
	for _, msg := range msgs {
		if msg.Info.Role != "assistant" || !ofRun(msg, since) {
			continue
		}
		m.noteUsage(t, t.SessionID, msg.Info.ID, msg.Info.Usage)
		for _, part := range msg.Parts {
			if part.Type == "step-finish" && part.ID != "" {
				m.onStepFinished(t, t.SessionID, part.ID, part.Reason)
			}
		}
	}
	m.notePolledSubs(t, t.SessionID, msgs)
}
