package core

import (
	"encoding/json"
	"strconv"

	"github.com/asyncagents/asyncagents/core/errclass"
	"github.com/asyncagents/asyncagents/core/task"
)

// reconcile checks every task that was at work when the history was written: OpenCode may have
// stopped with it, or it may have finished meanwhile. A task whose session was still being
// created starts again, once its parent's children show that OpenCode did not make one for it
// (history_reconcile_children.go).
func (m *Machine) reconcile() {
	var ids []string
	var unborn, lost []*run
	for _, t := range m.apiView() {
		if !t.Status.Terminal() && t.SessionID != "" {
			m.rememberSubagents(m.task(t.ID))
		}
		if !t.Queued && t.Waiting != nil {
			t.Waiting = nil // a held child's wait for its slot: the hold ended with the process
		}
		switch {
		case t.Queued && t.Status == task.StatusResumed:
			lost = append(lost, m.task(t.ID))
		case t.Status.Terminal() || t.Queued:
		case t.Worker != "" && t.SessionID != "":
			m.task(t.ID).restoring = true // reconciled once its worker is up (workers.go)
		case t.SessionID == "":
			unborn = append(unborn, t)
		default:
			ids = append(ids, t.ID)
		}
	}
	if len(ids) > 0 {
		m.request(Effect{Kind: EffectStatus}, pending{reconcile: ids})
	}
	for _, t := range unborn {
		t.unbound = true
		m.startTask(t)
	}
	for _, t := range lost {
		m.finish(t, task.StatusError, "", &task.TaskError{Name: "ResumeLost", Message: resumeLostMessage})
	}
	m.startQueued()
}

// rememberSubagents traces again, after a restart, the sessions below t's child that spent for it
// (its usage marks name each): a subagent that runs across the restart goes on counting toward the
// task's budgets, and its permission requests reach the user. The way from one to the child is
// not kept, so each leads to the child at once.
func (m *Machine) rememberSubagents(t *run) {
	for _, mk := range t.UsageMarks {
		if mk.Session != "" && mk.Session != t.SessionID && m.taskBelow(mk.Session) == nil {
			m.noteSessionBelow(mk.Session, t.SessionID)
		}
	}
}

// A failed status read at the reconcile is asked again, reconcileRetries times reconcileRetryMs
// apart. Read as "no child is busy" at once, it would end as interrupted every restored child
// whose answer is not complete yet, though it may still be at work: OpenCode answering one request
// badly while it starts is no sign that the children stopped.
const (
	reconcileTimer   = "reconcile.retry"
	reconcileRetries = 3
	reconcileRetryMs = 1000
)

// onReconcileStatus reads each restored task's messages, knowing which children are busy.
func (m *Machine) onReconcileStatus(p pending, ev Event) {
	busy := map[string]json.RawMessage{}
	ok := ev.OK && json.Unmarshal(ev.Result, &busy) == nil
	if !ok && p.worker != "" {
		m.stillRestoring(p.reconcile, reconcileError(ev)) // asked again at the worker's next check
		return
	}
	if !ok && m.reconcileTries < reconcileRetries {
		m.reconcileTries++
		// The reconcile of an adopted child (history_reconcile_children.go) may fail beside it.
		m.reconcileRetry = append(m.reconcileRetry, p.reconcile...)
		m.log("warn", "session.status failed at the reconcile (try "+strconv.Itoa(m.reconcileTries)+" of "+strconv.Itoa(reconcileRetries+1)+"), asking again in 1 s: "+reconcileError(ev))
		m.out = append(m.out, Effect{Kind: EffectTimerSet, TimerID: reconcileTimer, DelayMs: reconcileRetryMs})
		return
	}
	if !ok {
		m.log("warn", "session.status failed at the reconcile "+strconv.Itoa(m.reconcileTries+1)+" times; the restored children are read as not busy: "+reconcileError(ev))
	}
	if len(m.reconcileRetry) == 0 { // none waits for the retry timer (an adopted child's read may answer first)
		m.reconcileTries = 0
	}
	for _, id := range p.reconcile {
		t := m.task(id)
		if t == nil || t.Status.Terminal() {
			continue
		}
		_, isBusy := busy[t.SessionID]
		m.request(Effect{Kind: EffectMessages, SessionID: t.SessionID, TaskID: id}, pending{taskID: id, restored: true, busy: isBusy})
	}
	m.armPoll()
}

// retryReconcile asks OpenCode again which restored children are busy.
func (m *Machine) retryReconcile() {
	ids := m.reconcileRetry
	m.reconcileRetry = nil
	if len(ids) > 0 {
		m.request(Effect{Kind: EffectStatus}, pending{reconcile: ids})
	}
}

// reconcileError says why a status read failed.
func reconcileError(ev Event) string {
	if !ev.OK {
		return ev.Error
	}
	return "the answer is not a map of session statuses"
}

// onReconcileMessages ends a restored task as its child's messages say: finished meanwhile, gone,
// or interrupted. A child OpenCode still lists as busy goes on being tracked.
func (m *Machine) onReconcileMessages(p pending, ev Event) {
	t := m.task(p.taskID)
	if t == nil || t.Status.Terminal() || m.reconcileDueStop(t, ev.OK, ev.Result) || m.onReconcileNeverPrompted(t, p, ev) {
		return
	}
	if !ev.OK {
		m.finish(t, task.StatusError, "", &task.TaskError{Name: "Interrupted", Message: interruptedGonePrefix + ev.Error + ")"})
		return
	}
	// The fallback loop's place is not in the history; its attempts are. A last attempt that
	// failed was being left for the next model when OpenCode stopped: its failure is on record
	// (and in the health file), and what the session shows now is that attempt's end or our
	// abort's echo, not the task's outcome. The next model gets the task. An attempt that had
	// been compacted is not compacted again.
	if info := t.FallbackInfo; info != nil && len(info.Attempts) > 0 && m.canFallBack(t) {
		last := info.Attempts[len(info.Attempts)-1]
		t.compacted = last.Compacted
		if !last.Success && last.Error != "" && !p.busy {
			t.switching, t.abortDone = true, true
			t.pendingErr, t.pendingClass = &task.TaskError{Name: "APIError", Message: last.Error}, errclass.ErrorClass(last.Class)
			m.switchModel(t)
			return
		}
	}
	o, err := readOutcome(ev.Result, 0)
	switch {
	case err == nil && o.done:
		m.finishWith(t, o, false)
		m.checkBeforeTelling(t)
	case p.busy:
		t.promptSent = true
		// Timers do not outlive the host: the attempt is watched for silence again.
		if m.canFallBack(t) {
			m.armAttemptTimer(t, m.cfg.Fallback.AttemptTimeoutMs)
		}
	default:
		m.finish(t, task.StatusError, "", &task.TaskError{Name: "Interrupted", Message: interruptedStopped})
	}
}

// checkBeforeTelling makes the notice of a restored task the reconcile just ended wait for a read
// of its parent's messages: a process whose history could not be written (a full disk) may have
// told the parent already, and the record of it never reached the disk. A notice of the task's
// end sent since it started (or resumed) counts, and is recorded as accepted instead.
func (m *Machine) checkBeforeTelling(t *run) {
	b := m.outbox.Get(t.ParentSessionID)
	if b == nil || !t.Status.Terminal() || t.NoticeOwed == 0 {
		return
	}
	for i := range b.Queue {
		for j := range b.Queue[i].tasks {
			if nt := &b.Queue[i].tasks[j]; nt.ID == t.ID {
				nt.EndSince = max(t.StartedAt, t.ResumedAt)
				b.Check = true
			}
		}
	}
}
