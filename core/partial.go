package core

import (
	"strings"
	"unicode/utf8"

	"github.com/asyncagents/asyncagents/core/task"
)

// Partial work: what a child did, kept in its task's record as it works (task.Partial), so that
// a task that fails, times out or is cancelled after long work still tells its parent what was
// done, and a restart does not lose it. The text is written to the history when a text part
// ends, not on every update of one: a record per streamed delta would grow the log for nothing.

// notePartialText takes the tracked message's text so far as the child's latest text. A message
// with no text yet (a step that only calls tools) leaves the previous text in place.
func (m *Machine) notePartialText(t *run, tm *trackedMessage, ended bool) {
	var texts []string
	for _, id := range tm.order {
		if p := tm.parts[id]; !p.skip && strings.TrimSpace(p.text) != "" {
			texts = append(texts, p.text)
		}
	}
	if len(texts) == 0 {
		return
	}
	text := strings.Join(texts, "\n\n")
	p := t.partial()
	p.Text, p.TextChars = cutRunes(text, m.cfg.MaxResultChars), utf8.RuneCountInString(text)
	t.latestText = text
	t.textAt = m.now
	if ended {
		m.touchProgress(t)
	}
}

// noteToolRun records a tool call of the child the first time its part is seen, and its title
// when OpenCode gives one (a running or completed call has it).
func (m *Machine) noteToolRun(t *run, callID, tool, title string, first bool) {
	p := t.partial()
	if first {
		p.Tools = append(p.Tools, task.ToolRun{Name: tool, Title: title})
		t.toolCallIDs = append(t.toolCallIDs, callID)
		if n := len(p.Tools); n > task.MaxPartialTools {
			p.Tools = append([]task.ToolRun{}, p.Tools[n-task.MaxPartialTools:]...)
		}
		if n := len(t.toolCallIDs); n > task.MaxPartialTools {
			t.toolCallIDs = append([]string{}, t.toolCallIDs[n-task.MaxPartialTools:]...)
		}
		m.touchProgress(t)
		return
	}
	if title == "" {
		return
	}
	// The call IDs are not kept across a restart: a title that arrives after one is not matched.
	off := len(p.Tools) - len(t.toolCallIDs)
	for i := len(t.toolCallIDs) - 1; i >= 0; i-- {
		if t.toolCallIDs[i] != callID {
			continue
		}
		if off+i >= 0 && p.Tools[off+i].Title != title {
			p.Tools[off+i].Title = title
			m.touchProgress(t)
		}
		return
	}
}

// watchText is the end of the child's latest text, for a look at a running task: the whole
// text while the machine has it, else (after a restart) the part of it the record kept.
func (t *run) watchText() string {
	text := t.latestText
	if text == "" && t.Partial != nil {
		text = t.Partial.Text
	}
	return tailRunes(text, watchChars)
}

// partial returns the task's partial work, starting it if there is none yet.
func (t *run) partial() *task.Partial {
	if t.Partial == nil {
		t.Partial = &task.Partial{}
	}
	return t.Partial
}

// attemptPartial is the text the current attempt wrote, if it wrote any: a text older than the
// attempt is an earlier attempt's.
func (t *run) attemptPartial(attemptStart int64) string {
	if t.Partial == nil || t.Partial.Text == "" || t.textAt < attemptStart {
		return ""
	}
	return t.Partial.Text
}

// cutRunes keeps the first limit characters (runes) of s.
func cutRunes(s string, limit int) string {
	if limit <= 0 || len(s) <= limit {
		return s // no more runes than bytes
	}
	n := 0
	for i := range s {
		if n == limit {
			return s[:i]
		}
		n++
	}
	return s
}

// tailRunes keeps the last limit characters (runes) of s.
func tailRunes(s string, limit int) string {
	n := utf8.RuneCountInString(s)
	if n <= limit {
		return s
	}
	skip := n - limit
	for i := range s {
		if skip == 0 {
			return s[i:]
		}
		skip--
	}
	return ""
}
