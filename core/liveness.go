package core

import (
	"fmt"

	"github.com/asyncagents/asyncagents/core/errclass"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/core/text"
)

// Liveness: no task hangs silently. A running task with no activity (a new message part, or a
// tool at work) for stall.warnAfterMs is marked stalled (task.StalledSince) and its parent gets
// one short notice, stored without a model turn; later reminders of the same stall back off
// (at 2×, 4×, 8× the threshold since progress stopped, their gaps at most an hour) and reach
// the log, not the parent's conversation. A task given a wall-clock limit (asyncagents_task's
// timeout, or taskTimeoutMs) is aborted at it and fails, carrying its partial work.
//
// Stalls are looked at when the polling timer fires (pollIntervalMs, every few seconds while a
// task is at work): a precision of one poll, plenty for thresholds of minutes, and activity
// needs no timer since it only moves the threshold later. The wall-clock limit has a timer of
// its own (deadline.go); the poll checks it too, for a task restored after a restart.

// maxStallGapMs bounds the gap between two reminders of one stall.
const maxStallGapMs = 3_600_000

// lastActivity is when t last showed activity: a message part, its (re)start, or the start of
// its current attempt.
func lastActivity(t *run) int64 {
	last := max(t.Progress.LastUpdate, t.StartedAt, t.ResumedAt, t.polledBusyAt)
	if t.FallbackInfo != nil {
		if n := len(t.FallbackInfo.Attempts); n > 0 {
			last = max(last, t.FallbackInfo.Attempts[n-1].Timestamp)
		}
	}
	return last
}

// runStart is when the current run began: the launch (or the start from the queue), or the
// latest resume.
func runStart(t *run) int64 { return max(t.StartedAt, t.ResumedAt) }

// checkLiveness ends the tasks past their wall-clock limit, and marks and reminds of stalls.
func (m *Machine) checkLiveness() {
	for _, t := range m.activeTasks() {
		if t.Queued || t.Status.Terminal() {
			continue
		}
		if t.WaitingPermission() != nil {
			continue // waiting for the user is no stall, and the wall clock waits for the user too
		}
		if d := m.deadline(t); d > 0 && m.now >= d {
			m.timeOut(t)
			continue
		}
		m.syncDeadline(t) // a task restored after a restart gets its timer here
		if !m.childHeld(t) {
			m.checkStall(t) // waiting for its own tasks is no stall (nested_turns.go)
		}
	}
}

// checkStall marks t stalled once it has been silent for the threshold, telling its parent, and
// gives the reminders of a stall under way as they fall due.
func (m *Machine) checkStall(t *run) {
	w := m.cfg.Stall.WarnAfter()
	if w <= 0 {
		return
	}
	if len(t.toolsRunning) > 0 {
		m.clearStall(t)
		return
	}
	last := lastActivity(t)
	if t.StalledSince == 0 {
		if m.now-last < w {
			return
		}
		t.StalledSince = last
		t.stallNext = last + 2*w
		m.touch(t)
		m.notifyStall(t)
		return
	}
	if t.stallNext == 0 {
		// Marked before a restart: its parent was told; the reminders go on from here.
		t.stallNext = m.now
	}
	if m.now < t.stallNext {
		return
	}
	m.log("warn", m.stallText(t))
	age := max(t.stallNext-t.StalledSince, w)
	t.stallNext = t.StalledSince + age + min(age, maxStallGapMs)
}

// onActivity notes that t's child did something: a stall, if any, is over, and so is a retry
// of its model call (core/retry.go).
func (m *Machine) onActivity(t *run) {
	m.clearStall(t)
	m.clearRetry(t)
}

// clearStall takes the stall mark off t.
func (m *Machine) clearStall(t *run) {
	if t.StalledSince == 0 {
		return
	}
	m.endStall(t)
	m.touch(t)
}

// endStall ends t's stall, if any, keeping it in t.Stalls (the batch timeline draws them).
func (m *Machine) endStall(t *run) {
	if t.StalledSince != 0 {
		t.Stalls = append(t.Stalls, task.Span{From: t.StalledSince, To: m.now})
		if len(t.Stalls) > task.MaxStalls {
			t.Stalls = t.Stalls[len(t.Stalls)-task.MaxStalls:]
		}
	}
	t.StalledSince, t.stallNext = 0, 0
}

// notifyStall tells t's parent, once per stall, without a model turn. The notice waits while
// the parent is busy (a noReply message to a busy session costs a turn in OpenCode 1.18), and
// is dropped if the stall is over by the time the parent is idle. A parent whose turn end waits
// for its tasks would read it only after the stall: it wakes a headless run's parent, and a held
// subagent (flushParent), whose model decides whether to wait on.
func (m *Machine) notifyStall(t *run) {
	if t.ParentSessionID == "" {
		return
	}
	m.toast(m.stallToast(t))
	m.post(t.ParentSessionID, notice{
		tasks:        []noticeTask{{ID: t.ID}},
		stalledSince: t.StalledSince,
		wake:         m.cfg.Headless.Waits(),
		agent:        t.ParentAgent,
		parts: []TextPart{
			{Type: "text", Text: m.stallText(t)},
			{Type: "text", Text: m.stallHidden(t), Synthetic: true},
		},
	})
}

// timeOut ends t at its wall-clock limit: the task fails with what it did so far, and its child
// is aborted.
func (m *Machine) timeOut(t *run) {
	e := &task.TaskError{Name: "Timeout", Message: fmt.Sprintf(timedOutFmt, text.ShortDuration(t.TimeoutMs))}
	if t.FallbackInfo != nil {
		m.endAttempt(t, false, e, errclass.ErrTimeout)
	}
	started := t.SessionID != ""
	if started {
		m.holdForAbort(t)
	}
	m.finish(t, task.StatusError, "", e)
	if started {
		m.request(Effect{Kind: EffectAbort, SessionID: t.SessionID, TaskID: t.ID}, pending{taskID: t.ID})
	}
}
