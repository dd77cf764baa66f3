package core

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// finish moves a task to a terminal status exactly once, then tells the parent and answers every
// asyncagents_output call blocked on it.
func (m *Machine) finish(t *Task, status Status, result string, taskErr *TaskError) {
	if t.Status.Terminal() {
		return
	}
	t.Status = status
	t.CompletedAt = m.now
	t.Result = result
	t.Error = taskErr
	m.notifyParent(t)
	m.releaseWaiters(t)
}

// batchProgress counts the finished and all tasks of t's batch, and those still running. Launches
// of the batch whose session is still being created count as running: a child can finish before
// its siblings exist.
func (m *Machine) batchProgress(t *Task) (done, total, running int) {
	for _, b := range m.batch(t.BatchID) {
		total++
		if b.Status.Terminal() {
			done++
		} else {
			running++
		}
	}
	n := m.launchesInFlight(t.BatchID)
	return done, total + n, running + n
}

// launchesInFlight counts the batch's launches that have no task yet.
func (m *Machine) launchesInFlight(batch string) int {
	n := 0
	for _, l := range m.agentWaiters {
		if batchID(l.sessionID, l.messageID) == batch {
			n++
		}
	}
	for _, p := range m.pending {
		if p.kind == EffectSessionCreate && p.launch != nil && batchID(p.launch.sessionID, p.launch.messageID) == batch {
			n++
		}
	}
	return n
}

// notifyParent sends the spec's two-part notice: a visible line for the user and a synthetic
// part for the model, which carries the result so the parent needs no tool call to read it.
func (m *Machine) notifyParent(t *Task) {
	if t.ParentSessionID == "" {
		return
	}
	done, total, running := m.batchProgress(t)
	visible := m.visibleNotice(t, done, total)
	hidden := m.hiddenNotice(t, total, running)
	m.request(Effect{
		Kind:      EffectPromptAsync,
		SessionID: t.ParentSessionID,
		Agent:     t.ParentAgent,
		Parts: []TextPart{
			{Type: "text", Text: visible},
			{Type: "text", Text: hidden, Synthetic: true},
		},
	}, pending{taskID: t.ID, notice: true})
}

// VisibleNotice texts, exactly as the spec words them.
func (m *Machine) visibleNotice(t *Task, done, total int) string {
	d := FormatDuration(t.Duration(m.now))
	var head string
	switch t.Status {
	case StatusCompleted:
		head = fmt.Sprintf("✓ **Agent %q finished in %s.**", t.Description, d)
	case StatusError:
		head = fmt.Sprintf("✗ **Agent %q failed in %s.**", t.Description, d)
	case StatusCancelled:
		head = fmt.Sprintf("⊘ **Agent %q cancelled after %s.**", t.Description, d)
	}
	text := fmt.Sprintf("%s\nTask Progress: %d/%d", head, done, total)
	if m.cfg.Development {
		text += "\n[hint attached]"
	}
	return text
}

func (m *Machine) hiddenNotice(t *Task, total, running int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Background task %s.\ntask_id: %s\nagent: %s\ndescription: %s\nstatus: %s\n\n", t.Status, t.ID, t.Agent, t.Description, t.Status)
	switch t.Status {
	case StatusCompleted:
		b.WriteString("<task_result>\n")
		b.WriteString(m.cutResult(t))
		b.WriteString("\n</task_result>\n\n")
	case StatusError:
		if t.Error != nil {
			fmt.Fprintf(&b, "error_type: %s\nerror: %s\n\n", t.Error.Name, t.Error.Message)
		}
	}
	if running > 0 {
		fmt.Fprintf(&b, "If you need results immediately, use asyncagents_output(task_id=%q).\n", t.ID)
		b.WriteString("You can continue working or just say 'waiting' and halt.\n")
		b.WriteString("WATCH OUT for leftovers, you will likely WANT to wait for all agents to complete.")
	} else {
		fmt.Fprintf(&b, "All %d tasks finished.\n", total)
		b.WriteString("Use asyncagents_output tools to see agent responses.")
	}
	return b.String()
}

// cutResult bounds the result carried in a notice, counting characters (runes), not bytes.
func (m *Machine) cutResult(t *Task) string {
	r := t.Result
	if r == "" {
		return "(the subagent returned no text)"
	}
	limit := m.cfg.MaxResultChars
	total := utf8.RuneCountInString(r)
	if total <= limit {
		return r
	}
	cut, n := 0, 0
	for i := range r {
		if n == limit {
			cut = i
			break
		}
		n++
	}
	return fmt.Sprintf("%s\n\n[result cut at %d of %d characters; call asyncagents_output(task_id=%q) for the whole result]", r[:cut], limit, total, t.ID)
}
