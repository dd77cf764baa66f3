package core

import (
	"encoding/json"
	"strings"

	"github.com/asyncagents/asyncagents/core/ocevents"
	"github.com/asyncagents/asyncagents/core/task"
)

// trackedMessage is the child's newest assistant message as OpenCode's events describe it. When
// the child goes idle and this picture is complete, the task finishes at once, without a round
// trip to read the messages: over OpenCode's HTTP API that read costs tens of milliseconds, which
// is most of the delay between a child finishing and its notice.
type trackedMessage struct {
	id        string
	created   int64
	completed int64
	finish    string
	err       *task.TaskError
	parts     map[string]*trackedText
	order     []string
}

type trackedText struct {
	text  string
	ended bool
	skip  bool // synthetic or ignored: not part of the answer
}

// outcome reads the tracked message. known is false when the events did not tell enough (a text
// part not yet ended, no completion time), and the messages must be read instead.
func (t *trackedMessage) outcome() (o outcome, known bool) {
	if t == nil {
		return outcome{}, false
	}
	if t.err != nil {
		return outcome{done: true, err: t.err, unsettled: t.completed == 0}, true
	}
	if t.completed == 0 || t.finish == "" || t.finish == "tool-calls" {
		return outcome{}, false
	}
	// Events say which parts exist, not how many there will be: with no text part seen, the
	// answer may have been lost, so only the messages can tell (an answer without text is rare).
	if len(t.order) == 0 {
		return outcome{}, false
	}
	var texts []string
	for _, id := range t.order {
		p := t.parts[id]
		if !p.ended {
			return outcome{}, false
		}
		if !p.skip && strings.TrimSpace(p.text) != "" {
			texts = append(texts, p.text)
		}
	}
	return outcome{done: true, result: strings.Join(texts, "\n\n")}, true
}

// taskError is the task's record of OpenCode's error object.
func taskError(e *ocevents.Error) *task.TaskError {
	if e == nil {
		return nil
	}
	msg := e.Data.Message
	if msg == "" {
		msg = e.Name
	}
	return task.NewError(e.Name, msg, e.Data.StatusCode, e.Data.ResponseBody)
}

// onMessageUpdated follows the child's messages: a newer assistant message replaces the tracked
// one, a newer user message (a follow-up prompt) clears it.
func (m *Machine) onMessageUpdated(p ocevents.MessageUpdated) {
	if p.Info.Role == "assistant" && p.Info.Provider != "" && p.Info.ModelID != "" {
		// The model a parent's turn runs on: a task it launches inherits it by default.
		m.sessionModel.set(p.Info.SessionID, p.Info.Provider+"/"+p.Info.ModelID)
	}
	if p.Info.Role == "user" {
		m.noteUserMessage(p.Info.SessionID, p.Info.Time.Created) // a headless run's wake arrived (headless.go)
	}
	switch {
	case p.Info.Role != "assistant" || p.Info.Error == nil:
	case p.Info.Error.Name == ocevents.AbortedError:
		m.onTurnAborted(p.Info.SessionID) // an abort that landed outside the model stream says so here only
	default:
		m.onAnswerFailed(p.Info.SessionID, p.Info.Error.Name) // (cascade.go)
	}
	if p.Info.Role == "assistant" {
		m.noteAnswer(p.Info.SessionID, p.Info.ID, p.Info.Time.Created) // (headless.go answerBegan)
	}
	t := m.task(p.Info.SessionID)
	if t == nil && p.Info.Role == "assistant" {
		// A subagent the child runs through OpenCode's task tool spends for the task: its
		// answer is no end of the task's turn, so the budget may stop the task at any call.
		switch up := m.taskBelow(p.Info.SessionID); {
		case up == nil:
		case !up.Status.Terminal():
			m.noteUsage(up, p.Info.SessionID, p.Info.ID, p.Info.Usage)
			m.checkSpending(up, false)
		case m.spentBeforeEnd(up, p.Info):
			m.noteUsage(up, p.Info.SessionID, p.Info.ID, p.Info.Usage)
		}
		return
	}
	if t != nil && t.Status.Terminal() && p.Info.Role == "assistant" && m.spentBeforeEnd(t, p.Info) {
		m.noteUsage(t, t.SessionID, p.Info.ID, p.Info.Usage)
	}
	if t == nil || t.Status.Terminal() {
		return
	}
	info := p.Info
	if info.Role == "assistant" {
		m.noteUsage(t, info.SessionID, info.ID, info.Usage)
		m.checkSpending(t, info.Finish == "stop" && info.Time.Created >= t.userAfter)
		if t.Status.Terminal() {
			return
		}
	}
	since := m.ocTime(t, t.attemptAt) // on the child's OpenCode's clock (clock.go)
	if t.switching && info.Time.Completed != 0 && info.Time.Created < since {
		m.onSettled(t) // the failed (or aborted) turn's message is complete
	}
	summary := isSummary(info.Summary)
	if summary {
		m.noteCompaction(t)
	}
	if info.Time.Created < since || summary {
		return // an answer of an attempt that has been left, or a compaction's summary
	}
	if info.Role != "assistant" {
		if t.msg != nil && info.Time.Created > t.msg.created {
			t.msg = nil
		}
		t.userAfter = max(t.userAfter, info.Time.Created)
		return
	}
	tm := t.trackMessage(info.ID)
	if tm == nil {
		return
	}
	tm.created = info.Time.Created
	tm.completed = info.Time.Completed
	tm.finish = info.Finish
	tm.err = taskError(info.Error)
	m.finishOnCompletion(t, tm)
}

// finishOnCompletion finishes a task as soon as its child's last answer is complete, with no
// error and a final finish reason, without waiting for the session's idle: OpenCode publishes the
// idle only after its own work on the turn, and the notice would wait for that. Only a task
// whose chain has no second model: with one, leaving a model needs the idle (fallback.go). A task
// on one model (the agent's, or its parent's, as most are) has nowhere to leave for. And only when
// the events already told the whole answer. The idle that follows finds the task ended.
func (m *Machine) finishOnCompletion(t *run, tm *trackedMessage) {
	if len(t.Models) > 1 || t.switching || t.awaitBusy || !t.promptSent || t.msg != tm || tm.err != nil {
		return
	}
	if tm.created < t.userAfter {
		return // a message came after it (a notice its held turn waited for): the loop answers it
	}
	if o, known := tm.outcome(); known && o.done && o.err == nil {
		m.finishWith(t, o, true)
	}
}

// isSummary reads an assistant message's summary flag: true marks a compaction's summary. A user
// message's summary is an object (its title and diffs), never true.
func isSummary(raw json.RawMessage) bool { return string(raw) == "true" }

// trackMessage returns the tracked message with id, starting to track it if it is new.
func (t *run) trackMessage(id string) *trackedMessage {
	if id == "" {
		return nil
	}
	if t.msg == nil || t.msg.id != id {
		t.msg = &trackedMessage{id: id, parts: map[string]*trackedText{}}
	}
	return t.msg
}

// onTextPart records a text part of the child's answer.
func (m *Machine) onTextPart(t *run, id, messageID, text string, ended, skip bool) {
	tm := t.msg
	if tm == nil || tm.id != messageID {
		tm = t.trackMessage(messageID)
		if tm == nil {
			return
		}
	}
	p, ok := tm.parts[id]
	if !ok {
		p = &trackedText{}
		tm.parts[id] = p
		tm.order = append(tm.order, id)
	}
	p.text, p.ended, p.skip = text, ended, skip
	m.notePartialText(t, tm, ended)
}

// spentBeforeEnd reports whether an assistant message's figures, told after t ended, are still
// t's: a call that began before its end. A cancel, a deadline or a budget
// ends a task while its child (or a subagent below it) is in a model call, and OpenCode writes
// that call's tokens and cost as the abort lands, after the end. They are counted, and nothing is
// stopped for them (the polled worker's settle read does the same, workers_poll_settle.go). A
// message begun after the end (the user talking to the child's session) is not the task's.
func (m *Machine) spentBeforeEnd(t *run, info ocevents.MessageInfo) bool {
	created := info.Time.Created
	return created != 0 && created < m.ocTime(t, t.CompletedAt) // one with no time cannot be placed
}
