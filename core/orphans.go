package core

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/asyncagents/asyncagents/core/task"
)

// A task that fails leaves what its child launched with no one to read it: each of those
// tasks' notices would wake the failed child, and OpenCode would start a model turn in a
// session whose task is over, for an answer that goes nowhere (billed all the same). So they
// are cancelled with it, all the way down, keeping their partial work, as a cancel, a timeout's
// abort cascade and a budget stop already did. Not for a task that completes: its child's turn
// ended with nothing of its own under way (nested_turns.go), or it was let go on purpose. Nor
// for one restored from the history whose end its child's messages have yet to tell, whoever
// cancels (or a budget stops): it may have finished while OpenCode was down, and a stop would
// lose its result (history_reconcile.go). Its reconcile keeps an answer finished meanwhile and
// stops anything short of one. And whatever path a notice takes, a session whose task is over is
// not woken by it (outbox.go).

// orphanReasonFmt is the cancel reason of a task whose parent task failed (%s: its error's name).
const orphanReasonFmt = "its parent task failed (%s)"

// cancelOrphans cancels the launches and the tasks under the child of t, which just failed,
// without a notice each: t's own notice tells its parent of its end.
func (m *Machine) cancelOrphans(t *run) {
	name := "error"
	if t.Error != nil && t.Error.Name != "" {
		name = t.Error.Name
	}
	reason := fmt.Sprintf(orphanReasonFmt, name)
	m.cancelLaunches(t.SessionID, reason, true)
	if below := m.cancelBelow(t.SessionID, reason); len(below) > 0 {
		m.log("info", fmt.Sprintf("task %s failed: %d task(s) below it cancelled with it", t.ID, len(below)))
	}
}

// stopIfDue ends t, restored and now found not finished (at work, never prompted, on its way to
// another model, stopped, or about to be given a child), when a stop is due (dueStop). It reports
// whether it did.
func (m *Machine) stopIfDue(t *run) bool {
	reason, overBudget := m.dueStop(t)
	switch {
	case reason == "" && overBudget == "":
		return false
	case overBudget != "":
		t.budgetOnReconcile = ""
		m.log("info", "task "+t.ID+": reconciled after the restart, stopped for a budget it passed meanwhile")
		m.failForBudget(t, overBudget)
		return true
	}
	t.budgetOnReconcile = "" // a cancel is due, which a budget stop would only have repeated
	m.log("info", "task "+t.ID+": reconciled after the restart, cancelled: "+reason)
	// Its parent hears of it, as of any cancel, unless its parent's own task is over.
	t.quiet = m.taskOver(t.ParentSessionID)
	m.cancel(t, reason)
	return true
}

// dueStop is how t, restored, is to be stopped at its reconcile, if it is: cancelled for reason
// when a cancel reached it while it awaited its reconcile (a cascade, the cancel of a task above
// it: cancelBelow), or when the task it was launched under ended other than by completing (before
// the restart too), as that task's stop would have cancelled it; else failed for the budget limit
// it passed meanwhile (overBudget: stopForBudget). Both empty: no stop is due.
func (m *Machine) dueStop(t *run) (reason, overBudget string) {
	if t.Status.Terminal() {
		return "", ""
	}
	if t.cancelOnReconcile != "" {
		return t.cancelOnReconcile, ""
	}
	p := m.taskBelow(t.ParentSessionID)
	if p == nil || !p.Status.Terminal() || p.Status == task.StatusCompleted {
		return "", t.budgetOnReconcile
	}
	if p.Status != task.StatusError {
		return orphanCancelledReason, ""
	}
	name := "error"
	if p.Error != nil && p.Error.Name != "" {
		name = p.Error.Name
	}
	return fmt.Sprintf(orphanReasonFmt, name), ""
}

// reconcileDueStop ends t at its reconcile, given its child's messages (ok: they were read), when
// a stop is due (dueStop): an answer its child finished meanwhile is its result, kept; anything
// else, a failure included (its notice would wake a session that asked for the cancel, or whose
// task is over; a failure would move it to another model past its budget), is the stop. It
// reports whether it ended t.
func (m *Machine) reconcileDueStop(t *run, ok bool, msgs json.RawMessage) bool {
	if reason, overBudget := m.dueStop(t); reason == "" && overBudget == "" {
		return false
	}
	if o, err := readOutcome(msgs, 0); ok && err == nil && o.done && o.err == nil {
		m.finishWith(t, o, false)
		m.checkBeforeTelling(t)
		return true
	}
	return m.stopIfDue(t)
}

// orphanCancelledReason is the cancel reason of a task found at work, after a restart, under a
// task cancelled meanwhile.
const orphanCancelledReason = "its parent task was cancelled"

// awaitingReconcile reports whether t was restored from the history and has yet to be matched
// with what its child did meanwhile: its status or messages still to be read, or its worker's
// return, or its child still to be looked for among its parent's children.
func (m *Machine) awaitingReconcile(t *run) bool {
	if t.restoring || t.unbound || slices.Contains(m.reconcileRetry, t.ID) {
		return true
	}
	for _, p := range m.pending {
		if slices.Contains(p.reconcile, t.ID) || (p.restored && p.taskID == t.ID) {
			return true
		}
	}
	return false
}

// taskOver reports whether session is the child of a task that ended (or a subagent's below it).
func (m *Machine) taskOver(session string) bool {
	t := m.taskBelow(session)
	return t != nil && t.Status.Terminal()
}

// heldForWork reports whether session's turn end is held for its own tasks (not for an abort).
func (m *Machine) heldForWork(session string) bool {
	for _, h := range m.headless.holds {
		if h.session == session && !h.aborting() {
			return true
		}
	}
	return false
}
