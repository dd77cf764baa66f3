package core

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/asyncagents/asyncagents/core/ocevents"
	"github.com/asyncagents/asyncagents/core/task"
)

// message is the part of an OpenCode message the core reads (ocevents.Message).
type message = ocevents.Message

// outcome is what a child's messages say about its run. unsettled marks an error on an assistant
// message OpenCode has not completed yet: its turn is still winding down, and a prompt sent now
// would be dropped, so a fallback waits for the message to complete (or for the poll).
type outcome struct {
	done      bool
	result    string
	err       *task.TaskError
	unsettled bool
}

// readOutcome decides whether the child's last turn has ended, and how. The turn has ended when
// the last message is an assistant message that is completed (or carries an error) and is not a
// step that called tools and waits for their results.
//
// Messages created before since belong to an attempt the fallback loop has left: they are not
// this attempt's answer.
func readOutcome(raw json.RawMessage, since int64) (outcome, error) {
	msgs, err := ocevents.DecodeMessages(raw)
	if err != nil {
		return outcome{}, err
	}
	return outcomeOf(msgs, since), nil
}

// outcomeOf is readOutcome over messages already read.
func outcomeOf(msgs []message, since int64) outcome {
	if len(msgs) == 0 {
		return outcome{}
	}
	last := msgs[len(msgs)-1]
	if last.Info.Role != "assistant" || last.Info.Time.Created < since || isSummary(last.Info.Summary) {
		return outcome{}
	}
	if e := last.Info.Error; e != nil {
		return outcome{done: true, err: taskError(e), unsettled: last.Info.Time.Completed == 0}
	}
	if last.Info.Time.Completed == 0 || last.Info.Finish == "tool-calls" {
		return outcome{}
	}
	var texts []string
	for _, p := range last.Parts {
		if p.Type == "text" && !p.Synthetic && !p.Ignored && strings.TrimSpace(p.Text) != "" {
			texts = append(texts, p.Text)
		}
	}
	return outcome{done: true, result: strings.Join(texts, "\n\n")}
}

// finishWith ends a task as its child's last answer says. settled: the answer came from events
// that showed the failed message complete, followed by an idle, so the turn is surely over.
func (m *Machine) finishWith(t *run, o outcome, settled bool) {
	if o.err != nil {
		if m.childFailed(t, o.err, settled && !o.unsettled) {
			return // another attempt is under way
		}
		m.finish(t, task.StatusError, "", o.err)
		return
	}
	m.finish(t, task.StatusCompleted, o.result, nil)
}

// checkTask asks for the child's messages to see whether it has finished.
func (m *Machine) checkTask(t *run, fromIdle bool) {
	m.request(Effect{Kind: EffectMessages, SessionID: t.SessionID, TaskID: t.ID}, pending{taskID: t.ID, idle: fromIdle, attemptAt: t.attemptAt})
}

// checkQuiet asks for the child's messages once its OpenCode lists it busy no more.
func (m *Machine) checkQuiet(t *run) {
	m.request(Effect{Kind: EffectMessages, SessionID: t.SessionID, TaskID: t.ID}, pending{taskID: t.ID, quiet: true, attemptAt: t.attemptAt})
}

func (m *Machine) onMessages(p pending, ev Event) {
	t := m.task(p.taskID)
	if t == nil || t.Status.Terminal() {
		return
	}
	if !ev.OK {
		m.log("warn", "could not read messages of task "+t.ID+": "+ev.Error)
		return
	}
	if t.switching || p.attemptAt != t.attemptAt {
		return // read before the task moved between attempts: it describes the one left
	}
	msgs, err := ocevents.DecodeMessages(ev.Result)
	if err != nil {
		m.log("warn", "unreadable messages for task "+t.ID+": "+err.Error())
		return
	}
	if m.polled(t.Worker) {
		// The read of its end, asked once its worker lists it busy no more, takes all it did: an
		// end that read brings, here or below, needs no settle read (workers_poll_settle.go).
		t.polledEndRead, t.countOnly = p.quiet, p.quiet
		defer func() { t.polledEndRead, t.countOnly = false, false }()
		m.takePolled(t, msgs, !p.progress) // its progress, which no stream brought (workers_poll_progress.go)
		if p.progress || t.Status.Terminal() || t.switching {
			return
		}
	}
	// The messages say what each answer spent, the one the events may not have finished telling.
	for i := range msgs {
		if msgs[i].Info.Role == "assistant" {
			m.noteUsage(t, t.SessionID, msgs[i].Info.ID, msgs[i].Info.Usage)
		}
	}
	o := outcomeOf(msgs, m.ocTime(t, t.attemptAt))
	// Usage learned here is held to the budget as usage from events is: an answer that ends the
	// turn is the result, whatever it spent.
	if m.checkSpending(t, o.done); t.Status.Terminal() {
		return
	}
	switch {
	case o.done && o.unsettled && p.idle && t.FallbackInfo != nil:
		// The failed turn is still being written; its completion (or the poll) decides.
	case o.done:
		m.finishWith(t, o, false)
	case t.sessionError != nil && (p.idle || t.promptSent):
		// The prompt failed before any assistant message was written.
		if m.childFailed(t, t.sessionError, false) {
			return
		}
		m.finish(t, task.StatusError, "", t.sessionError)
	case !p.idle && m.promptDropped(t, msgs):
		m.resendPrompt(t)
	case m.polledSilent(t, msgs):
		// Its session.error came on no stream: the prompt failed before any answer (workers_poll.go).
		e := &task.TaskError{Name: "NoAnswer", Message: fmt.Sprintf(polledNoAnswerFmt, t.Worker)}
		if !m.childFailed(t, e, false) {
			m.finish(t, task.StatusError, "", e)
		}
	case p.idle && t.promptSent:
		m.finish(t, task.StatusError, "", &task.TaskError{Name: "NoAnswer", Message: noAnswer})
	}
}
