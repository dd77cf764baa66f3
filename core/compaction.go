package core

import (
	"fmt"
	"github.com/asyncagents/asyncagents/core/task"
	"strings"

	"github.com/asyncagents/asyncagents/core/text"
)

// The parent remembers its tasks through compaction. When OpenCode compacts a parent's
// conversation, the summary may drop the task IDs, and the parent no longer knows what it
// launched or what still runs. Two things keep them: the compaction hook adds this parent's tasks
// to what the summary is asked to keep (HookCompacting), and once the session is compacted the
// parent gets one short message, without a model turn, listing the tasks still running or whose
// result it has not read, so its next turn sees them whatever the summary kept.

// HookCompacting is the name under which a host asks, with the tool.call envelope, for the
// context to add to a session's compaction (OpenCode's experimental.session.compacting hook). It
// is not a tool: no model can call it.
const HookCompacting = "asyncagents.compacting"

// maxRemembered bounds the tasks one compaction's context or message lists, newest kept.
const maxRemembered = 30

// onCompactingHook answers the compaction hook with this session's tasks, or nothing.
func (m *Machine) onCompactingHook(ev Event) {
	tasks := m.tasksOf(ev.SessionID, func(*run) bool { return true })
	if len(tasks) == 0 {
		m.replyTool(ev.CallID, "", nil)
		return
	}
	var b strings.Builder
	b.WriteString(compactionContextHead)
	for _, t := range tasks {
		b.WriteString(m.rememberLine(t))
	}
	b.WriteString(compactionContextTail)
	m.replyTool(ev.CallID, b.String(), nil)
}

// onParentCompacted tells a compacted parent, once, the tasks it must not forget: those still at
// work, and those that finished since its previous compaction (or ever) whose result it has not
// read with asyncagents_output.
func (m *Machine) onParentCompacted(sessionID string) {
	// A result told before the previous compaction went into that summary's context already.
	since := m.compactedAt[sessionID]
	if m.compactedAt == nil {
		m.compactedAt = map[string]int64{}
	}
	m.compactedAt[sessionID] = m.now
	tasks := m.tasksOf(sessionID, func(t *run) bool {
		return !t.Status.Terminal() || (t.RetrievedAt == 0 && t.CompletedAt >= since)
	})
	if len(tasks) == 0 {
		return
	}
	running := 0
	var b strings.Builder
	for _, t := range tasks {
		if !t.Status.Terminal() {
			running++
		}
		b.WriteString(m.rememberLine(t))
	}
	// Not owed: a crash before it is sent loses a reminder, never a result.
	m.post(sessionID, notice{
		tasks: []noticeTask{{ID: tasks[0].ID}},
		agent: tasks[0].ParentAgent,
		parts: []TextPart{
			{Type: "text", Text: fmt.Sprintf(compactedVisibleFmt, text.CountOf(running, "background task", "background tasks"), len(tasks)-running)},
			{Type: "text", Text: compactedHiddenHead + b.String() + compactionContextTail, Synthetic: true},
		},
	})
}

// tasksOf lists a session's tasks that keep, the newest maxRemembered, oldest first.
func (m *Machine) tasksOf(session string, keep func(*run) bool) []*run {
	var out []*run
	for i := len(m.order) - 1; i >= 0 && len(out) < maxRemembered; i-- {
		t := m.tasks[m.order[i]]
		if t != nil && t.ParentSessionID == session && keep(t) {
			out = append(out, t)
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// rememberLine is one task in a compaction's context: its IDs, agent, label, status, and a line of
// its result or error.
func (m *Machine) rememberLine(t *run) string {
	state := string(t.Status)
	switch {
	case t.Queued:
		state = "queued"
	case t.Status == task.StatusCompleted:
		state = "completed: " + firstLineCut(t.Result)
		if t.RetrievedAt == 0 {
			state += " (result not read yet)"
		}
	case t.Status == task.StatusError && t.Error != nil:
		state = "failed: " + firstLineCut(t.Error.Message)
	case !t.Status.Terminal():
		state = "running for " + text.Duration(m.now-t.StartedAt)
	}
	return fmt.Sprintf("- %s%s @%s %q: %s\n", t.ID, sessionSuffix(t), t.Agent, t.Description, state)
}

func sessionSuffix(t *run) string {
	if t.SessionID == "" || t.SessionID == t.ID {
		return ""
	}
	return " (session " + t.SessionID + ")"
}

// firstLineCut is the first line of s, cut at 120 characters.
func firstLineCut(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if r := []rune(s); len(r) > 120 {
		s = string(r[:120]) + "…"
	}
	return s
}
