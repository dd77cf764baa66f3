package core

import "github.com/asyncagents/asyncagents/core/task"

// The overlap in an isolated task's notice ("also changed by bg_…: src/x.go") is computed over
// the commits the core knows, so it is as complete as the notice can be when it goes, not when
// the task ended:
//
//   - an isolated task's end notice is written again when it goes (rewriteEnd), so one that
//     waited (for a busy parent, a retry, a message in flight) names the siblings that ended
//     meanwhile; it keeps the progress line of its own end;
//   - a notice with changes waits, while a sibling of the same parent that has ended has its
//     worktree.commit under way, for that commit's answer (awaitsSiblingCommit): when both end
//     together each notice then names the other. The answer is in flight, so the wait is as
//     long as one git commit (an answer that never comes expires, bounds.go), and no timer
//     stands for it.
//
// A sibling still at work when a notice goes cannot be named by it; its own notice names the
// first (docs/rationale/worktrees.md).

// awaitsSiblingCommit reports whether parent's queued notices must wait: one tells of an
// isolated task with changes, and a sibling's commit is under way.
func (m *Machine) awaitsSiblingCommit(parent string, queue []notice) bool {
	if len(m.wt.committing) == 0 {
		return false
	}
	queued := map[string]bool{}
	changed := false
	for _, n := range queue {
		for _, nt := range n.tasks {
			queued[nt.ID] = true
			if t := m.task(nt.ID); n.end != nil && t != nil && hasChanges(t) {
				changed = true
			}
		}
	}
	if !changed {
		return false
	}
	for id, to := range m.wt.committing {
		if to == parent && !queued[id] {
			return true
		}
	}
	return false
}

// hasChanges reports whether t's branch holds changes its notice lists.
func hasChanges(t *run) bool {
	return t.Worktree != nil && t.Worktree.Merge == task.MergePending && len(t.Worktree.Files) > 0
}

// siblingCommitted has parent's notices looked at again once a commit they may wait for is
// answered.
func (m *Machine) siblingCommitted(parent string) {
	if parent != "" && m.outbox.Get(parent) != nil {
		m.markReady(parent)
	}
}

// rewriteEnd writes an isolated task's end notice again as it goes, with what is known now of
// its siblings' commits, when it still tells of the same end.
func (m *Machine) rewriteEnd(n notice) notice {
	if n.end == nil || len(n.tasks) != 1 {
		return n
	}
	t := m.task(n.tasks[0].ID)
	if t == nil || t.Worktree == nil || !t.Status.Terminal() || t.NoticeOwed != n.tasks[0].OwedAt {
		return n
	}
	n.parts = m.endParts(t, *n.end)
	return n
}
