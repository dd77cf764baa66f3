package core

import (
	"fmt"
	"slices"
)

// A task that fails leaves what its child launched with no one to read it: each of those
// tasks' notices would wake the failed child, and OpenCode would start a model turn in a
// session whose task is over, for an answer that goes nowhere (billed all the same). So they
// are cancelled with it, all the way down, keeping their partial work, as a cancel, a timeout's
// abort cascade and a budget stop already did. Not for a task that completes: its child's turn
// ended with nothing of its own under way (nested_turns.go), or it was let go on purpose. Nor
// for one restored from the history whose end its child's messages have yet to tell: it may have
// finished while OpenCode was down, and a cancel would lose its result (history_reconcile.go).

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
	n := 0
	for _, o := range m.activeTasks() {
		if !m.launchedUnder(o, t.SessionID) || o.Status.Terminal() || m.awaitingReconcile(o) {
			continue
		}
		o.quiet = true
		n += 1 + len(m.cancel(o, reason))
	}
	if n > 0 {
		m.log("info", fmt.Sprintf("task %s failed: %d task(s) below it cancelled with it", t.ID, n))
	}
}

// awaitingReconcile reports whether t was restored from the history and its child's messages, or
// its worker, have yet to say what it did meanwhile.
func (m *Machine) awaitingReconcile(t *run) bool {
	if t.restoring || slices.Contains(m.reconcileRetry, t.ID) {
		return true
	}
	for _, p := range m.pending {
		if slices.Contains(p.reconcile, t.ID) || (p.restored && p.taskID == t.ID) {
			return true
		}
	}
	return false
}
