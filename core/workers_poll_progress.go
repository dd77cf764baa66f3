package core

import (
	"strings"
	"unicode/utf8"

	"github.com/asyncagents/asyncagents/core/ocevents"
)

// A polled task's progress (workers_poll.go). No stream brings its parts, so while its worker
// lists it busy its newest messages are read every polledProgressEveryMs (or pollMs, if longer),
// and what they show is taken as a snapshot: its latest text (its partial work), the tool calls
// not seen before, its finished steps, its spending, the tools at work now. Each is set, not
// added, or counted by an ID the machine already keeps, so a message read again at the next read
// changes nothing; and nothing is written, nor counted as activity, unless something changed. The
// read at its end takes the whole conversation the same way, so a call made between two reads is
// counted too. Only the messages of the current run count (since its attempt began or it was
// resumed): an earlier run's answer is not this run's work.

// polledProgressEveryMs is how often a busy polled task's newest messages are read: the
// dashboard's and the TUI's rows are a few seconds behind, its partial work as much.
const polledProgressEveryMs = 5_000

// polledProgressMessages is how many of its newest messages each read takes: the step under way
// and the ones just before it.
const polledProgressMessages = 4

// readPolledProgress asks for t's newest messages when its last read is old enough.
func (m *Machine) readPolledProgress(t *run) {
	every := max(int64(polledProgressEveryMs), m.cfg.Workers[t.Worker].PollMs)
	if t.SessionID == "" || t.switching || m.now-t.polledReadAt < every || m.messagesAsked(t.ID) {
		return
	}
	t.polledReadAt = m.now
	m.request(Effect{Kind: EffectMessages, SessionID: t.SessionID, TaskID: t.ID, Limit: polledProgressMessages},
		pending{taskID: t.ID, progress: true, attemptAt: t.attemptAt})
	m.readPolledSubs(t)
}

// takePolled takes a read of t's messages (its newest, or at its end all) as a snapshot.
func (m *Machine) takePolled(t *run, msgs []message, atEnd bool) {
	since := m.ocTime(t, max(t.attemptAt, t.ResumedAt))
	// Restored with calls counted and none seen since: the calls read now were counted before;
	// so were, at its end, the earlier ones the newest messages did not show.
	if t.seenCalls == nil && t.Progress.ToolCalls > 0 {
		t.polledSeeded = true
	}
	seeded := t.polledSeeded && (t.seenCalls == nil || atEnd)
	m.notePolledSubs(t, t.SessionID, msgs) // its subagents, whatever run they ran in (workers_poll_subagents.go)
	running := map[string]bool{}
	changed, answered := false, false
	var latest string
	for _, msg := range msgs {
		info := msg.Info
		if info.Role != "assistant" {
			continue
		}
		for _, p := range msg.Parts { // a tool at work, whatever run (a steer moves the attempt's start past it)
			if p.Type == "tool" && p.CallID != "" && (p.State.Status == "pending" || p.State.Status == "running") {
				running[p.CallID] = true
			}
		}
		if !ofRun(msg, since) {
			continue
		}
		m.noteUsage(t, t.SessionID, info.ID, info.Usage)
		var texts []string
		for _, p := range msg.Parts {
			switch {
			case p.Type == "step-finish" && p.ID != "":
				steps := t.Steps
				m.onStepFinished(t, t.SessionID, p.ID, p.Reason)
				changed = changed || t.Steps != steps
			case p.Type == "text" && !p.Synthetic && !p.Ignored && strings.TrimSpace(p.Text) != "":
				texts = append(texts, p.Text)
			case p.Type == "tool" && p.CallID != "":
				changed = m.notePolledCall(t, p.CallID, p.Tool, p.State.Title, seeded) || changed
			}
			if t.Status.Terminal() {
				return
			}
		}
		if len(texts) > 0 {
			latest = strings.Join(texts, "\n\n")
		}
		answered = info.Time.Completed != 0 && info.Finish != "" && info.Finish != "tool-calls"
	}
	t.toolsRunning = running
	if latest != "" && latest != t.latestText {
		p := t.partial()
		p.Text, p.TextChars = cutRunes(latest, m.cfg.MaxResultChars), utf8.RuneCountInString(latest)
		t.latestText, t.textAt, changed = latest, m.now, true
		m.touchProgress(t)
	}
	if changed {
		t.Progress.LastUpdate = m.now
		m.onActivity(t)
	}
	// An answer that ends the turn is the result, whatever it spent (the end read decides).
	if !atEnd && !answered {
		m.checkSpending(t, false)
	}
}

// notePolledCall counts a tool call the first time a read shows it, as the stream's first part
// of it is counted (onPartUpdated); seeded: the task was restored with its calls counted, so a
// call is marked seen and not counted again. It reports whether anything changed.
func (m *Machine) notePolledCall(t *run, callID, tool, title string, seeded bool) bool {
	switch {
	case t.seenCalls[callID]:
		m.noteToolRun(t, callID, tool, title, false)
		return false
	case seeded:
		if t.seenCalls == nil {
			t.seenCalls = map[string]bool{}
		}
		t.seenCalls[callID] = true
		return false
	}
	m.countToolCall(t, callID, tool, title)
	return true
}

// ofRun reports whether an assistant message is the current run's work, created since its start
// (since, on OpenCode's clock): not a compaction's summary, nor a step an abort cut short.
func ofRun(msg message, since int64) bool {
	info := msg.Info
	return info.Time.Created >= since && !isSummary(info.Summary) && (info.Error == nil || info.Error.Name != ocevents.AbortedError)
}
