package core

import (
	"fmt"
	"strings"

	"github.com/asyncagents/asyncagents/core/task"
)

// Steering a running child: asyncagents_message(task_id, message). OpenCode 1.18 takes a prompt
// sent to a busy session at once and its running loop picks it up at its next step (the loop
// re-reads the messages each step and stops only once the newest user message has an answer),
// so the child changes course without losing its work. The task's result is then the answer to
// that latest instruction: answers older than it are not the task's outcome, as answers of an
// attempt the fallback loop has left are not (attemptAt). A message that reaches the session just
// as its run ends is sent again by the poll, as a dropped prompt is (prompt_dropped.go). A queued
// task gets the message in the prompt it starts with.

// messageArgs are asyncagents_message's arguments.
type messageArgs struct {
	TaskID  string `json:"task_id"`
	Message string `json:"message"`
}

func (m *Machine) onMessageCall(ev Event) {
	var a messageArgs
	if err := parseArgs(ev.Args, &a); err != nil {
		m.failTool(ev.CallID, "asyncagents_message: "+err.Error()+"; nothing was sent")
		return
	}
	a.TaskID, a.Message = strings.TrimSpace(a.TaskID), strings.TrimSpace(a.Message)
	t := m.task(a.TaskID)
	switch {
	case a.TaskID == "" || a.Message == "":
		m.failTool(ev.CallID, messageArgsMissing)
	case t == nil && m.foreign(a.TaskID) != nil:
		m.failTool(ev.CallID, fmt.Sprintf(foreignTaskFmt, quote(a.TaskID)))
	case t == nil:
		m.failTool(ev.CallID, fmt.Sprintf(messageNoTaskFmt, quote(a.TaskID)))
	case t.ParentSessionID != ev.SessionID:
		m.failTool(ev.CallID, fmt.Sprintf(messageOtherSessionFmt, t.ID))
	case t.Status == task.StatusCompleted:
		m.failTool(ev.CallID, fmt.Sprintf(messageCompletedFmt, t.ID, t.ID))
	case t.Status.Terminal():
		m.failTool(ev.CallID, fmt.Sprintf(messageEndedFmt, t.ID, t.Status))
	case t.Queued && t.SessionID == "":
		t.Prompt += "\n\n" + a.Message
		m.noteSteer(t, a.Message, true)
		m.replyTool(ev.CallID, fmt.Sprintf(messageQueuedFmt, t.ID, t.Description), t.metadata("message to "+t.Description))
	default:
		m.steer(t, a.Message)
		m.replyTool(ev.CallID, fmt.Sprintf(messageSentFmt, t.ID, t.Description), t.metadata("message to "+t.Description))
	}
}

// steer sends a running child its new instruction; from now on only an answer to it ends the task.
func (m *Machine) steer(t *run, text string) {
	m.noteSteer(t, text, false)
	t.steerPrompt = text
	if t.SessionID == "" || t.Queued || t.switching {
		// Not prompted yet, or between models: the next prompt it gets is this one, with the
		// task's own prompt in the session before it (or, unsent yet, with it).
		if t.SessionID == "" || t.Queued {
			t.Prompt += "\n\n" + text
			t.steerPrompt = ""
		}
		return
	}
	t.msg, t.promptResends = nil, 0
	t.attemptAt = m.now
	m.sendPrompt(t)
	m.noteWake(t.SessionID) // a child held for its own tasks reads it at once (nested_turns.go)
}

// noteSteer records a message in the task's timeline.
func (m *Machine) noteSteer(t *run, text string, queued bool) {
	t.Steers = append(t.Steers, task.Steer{At: m.now, Text: text, BeforeStart: queued})
	if n := len(t.Steers); n > task.MaxSteers {
		t.Steers = append([]task.Steer{}, t.Steers[n-task.MaxSteers:]...)
	}
	m.touch(t)
}
