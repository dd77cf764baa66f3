package core

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/asyncagents/asyncagents/core/history"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/core/text"
	"github.com/asyncagents/asyncagents/core/view"
)

// --- Tool answers. ---

// launchTitle is the launch's one line where OpenCode shows a tool call's title (the title of
// its answer): the description and agent, then the ID, never the prompt.
func launchTitle(t *run) string {
	return fmt.Sprintf("%s (@%s) · %s", t.Description, t.Agent, t.ID)
}

func (m *Machine) launchText(t *run) string {
	if t.Status == task.StatusCancelled {
		return fmt.Sprintf("%sagent: %s\ndescription: %s\nstatus: cancelled\n\nThe task was cancelled before it started.", t.idLines(), t.Agent, t.Description)
	}
	if t.Queued {
		return fmt.Sprintf(`task_id: %s
%sagent: %s
description: %s
status: queued

It waits for a slot: %s. It starts when one frees. Its result arrives in this conversation as a notice when it finishes; to check before then, call asyncagents_output(task_id="%s").`, t.ID, workerLine(&t.Task), t.Agent, t.Description, view.Waiting(t.Waiting), t.ID)
	}
	return fmt.Sprintf(`task_id: %s
%sagent: %s
description: %s
status: running

The task runs in the background. Its result arrives in this conversation as a notice when it finishes; to check before then, call asyncagents_output(task_id="%s").`, t.ID, workerLine(&t.Task), t.Agent, t.Description, t.ID)
}

func (m *Machine) outputText(t *run, pg page) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "%sagent: %s\ndescription: %s\nstatus: %s\n", t.idLines(), t.Agent, t.Description, t.Shown())
	if t.Model != "" {
		fmt.Fprintf(&b, "model: %s\n", t.Model)
	}
	if line := fallbackLine(t); line != "" {
		fmt.Fprintf(&b, "fallback: %s\n", line)
	}
	if line := usageLine(&t.Task); line != "" {
		fmt.Fprintf(&b, "usage: %s\n", line)
	}
	if line := budgetLine(&t.Task); line != "" {
		fmt.Fprintf(&b, "%s\n", line)
	}
	if t.Queued || t.Waiting != nil {
		fmt.Fprintf(&b, "queued: %s\n", view.Waiting(t.Waiting))
	}
	b.WriteString(steersBlock(&t.Task))
	b.WriteString(m.worktreeBlock(t))
	hold := view.HoldOf(&t.Task)
	if p := hold.Permission; p != nil {
		fmt.Fprintf(&b, permissionOutputFmt, p.What(), text.Duration(max(m.now-p.At, 0)))
	}
	d := text.Duration(history.Duration(&t.Task, m.now))
	switch t.Status {
	case task.StatusCompleted:
		fmt.Fprintf(&b, "duration: %s\n", d)
		block, err := resultBlock(t, pg, b.String())
		if err != nil {
			return "", err
		}
		b.WriteString(block)
	case task.StatusError:
		fmt.Fprintf(&b, "duration: %s\n", d)
		if t.Error != nil {
			fmt.Fprintf(&b, "error_type: %s\n\n%s", t.Error.Name, t.Error.Message)
		}
		if p := partialText(t); p != "" {
			b.WriteString("\n\n" + strings.TrimSuffix(p, "\n\n"))
		}
	case task.StatusCancelled:
		fmt.Fprintf(&b, "duration: %s", d)
		if p := partialText(t); p != "" {
			b.WriteString("\n\n" + strings.TrimSuffix(p, "\n\n"))
		}
	default:
		fmt.Fprintf(&b, "running for: %s\n%s\n", d, progressText(t, m.now))
		if hold.StalledSince != 0 {
			fmt.Fprintf(&b, "stalled: no progress for %s\n", text.Silence(m.now-hold.StalledSince))
		}
		if line := m.retryText(t); line != "" {
			b.WriteString(line + "\n")
		}
		if text := t.watchText(); text != "" {
			fmt.Fprintf(&b, "\n<latest_text last_chars=\"%d\">\n%s\n</latest_text>\n", watchChars, text)
		}
		b.WriteString("\n")
		fmt.Fprintf(&b, "The task is still running. A notice arrives in this conversation when it finishes; call asyncagents_output(task_id=%q, block=true) to wait for it.", t.ID)
	}
	return b.String(), nil
}

func progressText(t *run, now int64) string {
	p := t.Progress
	tools := "none yet"
	if len(p.LastTools) > 0 {
		tools = strings.Join(p.LastTools, ", ")
	}
	return fmt.Sprintf("progress: %d tool calls; last tools: %s; last activity %s ago", p.ToolCalls, tools, text.Duration(now-p.LastUpdate))
}

// listLine is one task in asyncagents_list: the whole ID with the spec's (resumed) and (forked)
// marks, its child session once it has one, then status, label, agent, time and activity.
func (m *Machine) listLine(t *run) string {
	id := markedID(&t.Task)
	status := string(t.Status)
	if t.Queued || t.Waiting != nil {
		status = "queued (" + view.Waiting(t.Waiting) + ")"
	}
	if t.SessionID != "" && t.SessionID != t.ID {
		id += " | session " + t.SessionID
	}
	hold := view.HoldOf(&t.Task)
	if hold.StalledSince != 0 {
		status += fmt.Sprintf(" (stalled: no progress for %s)", text.Silence(m.now-hold.StalledSince))
	}
	if p := hold.Permission; p != nil {
		status += " (waiting for permission: " + p.What() + ")"
	}
	if line := m.retryText(t); line != "" {
		status += " (" + line + ")"
	}
	line := fmt.Sprintf("- %s | %s | %q | @%s%s | %s | %d tool calls", id, status, t.Description, t.Agent, workerSuffix(&t.Task), text.Duration(history.Duration(&t.Task, m.now)), t.Progress.ToolCalls)
	if u := usageLine(&t.Task); u != "" {
		line += " | " + u
	}
	if g := budgetLine(&t.Task); g != "" {
		line += " | " + g
	}
	if t.Status == task.StatusError && t.Error != nil {
		line += " | " + t.Error.Name + ": " + t.Error.Message
	}
	return line
}

// watchChars is how much of a running child's latest text asyncagents_output shows.
const watchChars = 500

// partialText is the work a failed or cancelled task did, for its notice and asyncagents_output:
// the tools it ran and its latest text, marked as partial. Empty when it did nothing.
func partialText(t *run) string {
	p := t.Partial
	if p == nil || (p.Text == "" && len(p.Tools) == 0) {
		return ""
	}
	var b strings.Builder
	b.WriteString("<partial_work>\nThe task did not finish; this is what it did before it stopped.\n")
	if len(p.Tools) > 0 {
		fmt.Fprintf(&b, "tools run (%d", t.Progress.ToolCalls)
		if t.Progress.ToolCalls > len(p.Tools) {
			fmt.Fprintf(&b, ", the last %d shown", len(p.Tools))
		}
		b.WriteString("):\n")
		for _, r := range p.Tools {
			if r.Title != "" {
				fmt.Fprintf(&b, "- %s: %s\n", r.Name, escapeMarkup(firstLine(r.Title)))
			} else {
				fmt.Fprintf(&b, "- %s\n", r.Name)
			}
		}
	}
	if p.Text != "" {
		b.WriteString("latest text (partial):\n")
		b.WriteString(escapeMarkup(p.Text))
		if n := utf8.RuneCountInString(p.Text); p.TextChars > n {
			fmt.Fprintf(&b, "\n[partial text cut at %d of %d characters]", n, p.TextChars)
		}
		b.WriteString("\n")
	}
	b.WriteString("</partial_work>\n\n")
	return b.String()
}
