package core

import "github.com/asyncagents/asyncagents/core/task"

// owedTo is the session a restored notice goes to: the task's parent, except for a task an
// interrupted turn cancelled below another task it cancelled: the cascade's ⊘ line told of it in
// the interrupted session, the task that launched it was cancelled with it, and its session is
// no longer at work.
func (m *Machine) owedTo(t *run) string {
	to := t.ParentSessionID
	if t.Status != task.StatusCancelled || t.CancelReason != cascadeReason {
		return to
	}
	for range m.cfg.MaxDepth + 1 {
		up := m.task(to)
		if up == nil || up.Status != task.StatusCancelled || up.CancelReason != cascadeReason || up.CompletedAt != t.CompletedAt {
			break
		}
		to = up.ParentSessionID
	}
	return to
}
