package core

import (
	"fmt"
	"github.com/asyncagents/asyncagents/core/task"
	"strings"

	"github.com/asyncagents/asyncagents/core/text"
)

// onListCall lists the calling session's tasks, oldest first.
func (m *Machine) onListCall(ev Event) {
	var lines []string
	for _, id := range m.order {
		t := m.sessionTask(id, ev.SessionID)
		if t == nil {
			continue
		}
		lines = append(lines, m.listLine(t))
	}
	if len(lines) == 0 {
		m.replyTool(ev.CallID, listNone, map[string]any{"title": "no tasks"})
		return
	}
	m.replyTool(ev.CallID, fmt.Sprintf(listHeadFmt, len(lines), strings.Join(lines, "\n")),
		map[string]any{"title": text.CountOf(len(lines), "task", "tasks")})
}

// onClearCall forgets the calling session's finished tasks. Running (and queued) tasks are kept
// and keep running: clearing is housekeeping, cancelling is asyncagents_cancel.
func (m *Machine) onClearCall(ev Event) {
	cleared, kept := 0, 0
	var unmerged []string
	order := m.order[:0]
	for _, id := range m.order {
		t := m.tasks[id] // parent and status are in a restored task's head: no need to read it whole
		switch {
		case t == nil:
			continue
		case t.ParentSessionID == ev.SessionID && t.Status.Terminal() && holdsUnmerged(t):
			unmerged = append(unmerged, t.ID) // its branch waits for asyncagents_merge
		case t.ParentSessionID == ev.SessionID && t.Status.Terminal():
			m.forget(id)
			cleared++
			continue
		case t.ParentSessionID == ev.SessionID:
			kept++
		}
		order = append(order, id)
	}
	m.order = order
	m.storeChanged()
	out := fmt.Sprintf(clearedFmt, text.CountOf(cleared, "finished task", "finished tasks"))
	switch {
	case kept == 1:
		out += clearKeptOne
	case kept > 1:
		out += fmt.Sprintf(clearKeptFmt, kept)
	}
	if len(unmerged) > 0 {
		out += " " + fmt.Sprintf(clearUnmergedFmt, text.CountOf(len(unmerged), "finished task", "finished tasks"), strings.Join(unmerged, ", "))
	}
	m.replyTool(ev.CallID, out, map[string]any{"title": "cleared " + text.CountOf(cleared, "task", "tasks")})
}

// onSessionDeleted: a deleted parent takes its tasks along. Running ones are aborted (nobody is
// left to notify), then all of them are forgotten. Other sessions' tasks are untouched.
func (m *Machine) onSessionDeleted(sessionID string) {
	m.stopTogether(func() { m.forgetSessionTasks(sessionID) })
	m.dropOutbox(sessionID)
	delete(m.busy, sessionID)
	m.sessionsBelow.forget(sessionID)
	m.startQueued()
}

// forgetSessionTasks stops the deleted session's running tasks, quietly (nobody is left to tell),
// and forgets all of its tasks.
func (m *Machine) forgetSessionTasks(sessionID string) {
	order := m.order[:0]
	for _, id := range m.order {
		// The parent and the status are in a restored task's head, and a task at work is always
		// read whole: the finished tasks forgotten here need not be read.
		t := m.tasks[id]
		if t == nil {
			continue
		}
		if t.ParentSessionID != sessionID {
			order = append(order, id)
			continue
		}
		if !t.Status.Terminal() {
			t.quiet, t.CancelReason = true, "parent session deleted"
			m.stop(t, task.StatusCancelled, nil, false, "")
		}
		m.tmuxClose(t)
		m.forget(id)
	}
	m.order = order
	m.storeChanged()
}
