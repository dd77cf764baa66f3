package core

import (
	"maps"
	"slices"

	"github.com/asyncagents/asyncagents/core/ocevents"
)

// A polled task's last spending (docs/rationale/workers_polled.md). A polled task's spending is
// read, not streamed: its child's newest messages every few seconds, its whole conversation at
// its end. A task that ends without that end read (cancelled, past its deadline, stopped by its
// budget at a progress read) has had none of what its child and its subagents spent since their
// last progress read counted: up to polledProgressEveryMs of their work, and every subagent still
// at work. So, polledSettleMs after such an end, the child's whole conversation is read once, for
// its spending and its subagents, each of which is then read whole too. The wait lets the abort
// reach the child and its subagents, so that steps that finished around it are written. What
// each message spent counts, as at an end read, a step the abort cut short included; that step
// is not counted as a step (ofRun), as at any read. A read that shows the child or a
// subagent still in an unfinished turn, or that fails (the worker busy for a moment), is asked
// again at the next settle timer, polledSettleTries timers in all; after that the record keeps
// what was counted. A task whose worker is down when it ends (a lost worker) gets no settle read:
// nothing there can be read, and the record keeps the last read's figures.

const (
	// polledSettleMs is how long after a polled task's end its last spending is read.
	polledSettleMs = 1_000
	// polledSettleTries bounds the settle timers of one end of a task.
	polledSettleTries = 3
)

// settleTimerPrefix names the timer that reads what a polled task spent last.
const settleTimerPrefix = "polled.settle:"

// settleOnEnd starts t's settle as it ends (each end of a task, a resumed one's too, has its
// own): its timer is armed unless its end came from its whole conversation read just now (the
// subagent reads that read asked for arm it if they fail or find a subagent still at work).
func (m *Machine) settleOnEnd(t *run) {
	t.polledSettling, t.settleArmed, t.settleTries = false, false, 0
	if !m.polled(t.Worker) || t.SessionID == "" || t.polledEndRead || !m.workerUp(t.Worker) {
		return
	}
	t.polledSettling = true
	m.armSettle(t)
}

// armSettle sets t's settle timer, unless it is set already or t has had all of them.
func (m *Machine) armSettle(t *run) {
	if t.settleArmed {
		return
	}
	if t.settleTries >= polledSettleTries {
		m.log("warn", "gave up reading what task "+t.ID+" spent last on worker "+t.Worker+": its counts stay as they were")
		return
	}
	t.settleArmed = true
	t.settleTries++
	m.emit(Effect{Kind: EffectTimerSet, TimerID: settleTimerPrefix + t.ID, DelayMs: polledSettleMs})
}

// onSettleTimer asks for what is still unread of an ended polled task: its child's whole
// conversation, when no read since its end counted it, and each subagent not yet read whole.
func (m *Machine) onSettleTimer(id string) {
	t := m.task(id)
	if t == nil || !t.Status.Terminal() || !t.settleArmed {
		return
	}
	t.settleArmed = false
	if t.polledSettling && !m.settleAsked(t) {
		m.request(Effect{Kind: EffectMessages, SessionID: t.SessionID, TaskID: t.ID}, pending{taskID: t.ID, settleEnd: t.CompletedAt})
	}
	for _, sub := range slices.Sorted(maps.Keys(t.polledSubs)) {
		s := t.polledSubs[sub]
		s.running = false // its task ended: whatever its part said, it is read whole
		m.readPolledSub(t, sub, s)
	}
}

// settleAsked reports whether a settle read of t's child is out for its last end.
func (m *Machine) settleAsked(t *run) bool {
	for _, p := range m.pending {
		if p.settleEnd == t.CompletedAt && p.taskID == t.ID {
			return true
		}
	}
	return false
}

// onSettleMessages counts what an ended polled task's child spent, as its last read shows, and
// has its subagents read whole. Its steps are counted as spending, not held to a budget: the task
// has ended. A read asked before the task was resumed says nothing of the end it meets now.
func (m *Machine) onSettleMessages(p pending, ev Event) {
	t := m.task(p.taskID)
	if t == nil || !t.polledSettling || !t.Status.Terminal() {
		return
	}
	if t.CompletedAt != p.settleEnd {
		return // the end it was asked for is gone; the one now has reads of its own
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
	// What each answer spent counts, whatever run it was in (as at an end read: a steer or a
	// model switch just before the end moved the run's start past steps not counted yet); a
	// message counted before counts once. Steps count as the run's.
	since := m.ocTime(t, max(t.attemptAt, t.ResumedAt))
	for _, msg := range msgs {
		if msg.Info.Role != "assistant" {
			continue
		}
		m.noteUsage(t, t.SessionID, msg.Info.ID, msg.Info.Usage)
		if !ofRun(msg, since) {
			continue
		}
		for _, part := range msg.Parts {
			if part.Type == "step-finish" && part.ID != "" {
				m.onStepFinished(t, t.SessionID, part.ID, part.Reason)
			}
		}
	}
	if turnOpen(msgs) {
		m.armSettle(t) // the abort has not reached it yet: read it again
	} else {
		t.polledSettling = false
	}
	m.notePolledSubs(t, t.SessionID, msgs)
}

// turnOpen reports whether a session's last assistant message is still being written: neither
// completed nor ended by an error (an abort's included).
func turnOpen(msgs []message) bool {
	for i := len(msgs) - 1; i >= 0; i-- {
		if info := msgs[i].Info; info.Role == "assistant" {
			return info.Time.Completed == 0 && info.Error == nil
		}
	}
	return false
}
