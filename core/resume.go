package core

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/asyncagents/asyncagents/core/task"
)

// resumeReq is a resume between its tool call and the check that the task's session still exists.
type resumeReq struct {
	callID, taskID, prompt, sessionID, messageID, agent string
}

// onResumeCall validates asyncagents_task(resume: …, prompt: …) and checks the session exists.
func (m *Machine) onResumeCall(ev Event, a taskArgs) {
	fail := func(format string, args ...any) {
		m.failTool(ev.CallID, "asyncagents_task: "+fmt.Sprintf(format, args...))
	}
	id := strings.TrimSpace(a.Resume)
	t := m.task(id)
	switch {
	case a.Fork:
		fail("fork and resume are mutually exclusive: fork starts a new task with this session's context, resume continues an existing task; no task was changed")
	case strings.TrimSpace(a.Prompt) == "":
		fail("argument prompt is missing or empty: a resume needs the follow-up prompt; no task was changed")
	case t == nil:
		fail("no background task has task_id %s to resume; start one with asyncagents_task(description, prompt, agent)", quote(id))
	case t.ParentSessionID != ev.SessionID:
		fail("task %s belongs to another session; only its own session can resume it", t.ID)
	case t.Status == task.StatusResumed:
		fail("a resume of task %s is already under way (resume #%d); wait for its notice, then resume again", t.ID, t.ResumeCount)
	case t.Status != task.StatusCompleted:
		fail("only a completed task can be resumed; task %s is %s. Start a new task with asyncagents_task instead", t.ID, t.Status)
	default:
		r := &resumeReq{callID: ev.CallID, taskID: t.ID, prompt: a.Prompt, sessionID: ev.SessionID, messageID: ev.MessageID, agent: ev.Agent}
		m.request(Effect{Kind: EffectSessionGet, SessionID: t.SessionID, TaskID: t.ID}, pending{taskID: t.ID, resume: r})
	}
}

// onResumeChecked resumes the task once its session is known to exist.
func (m *Machine) onResumeChecked(p pending, ev Event) {
	r := p.resume
	t := m.task(r.taskID)
	if t == nil {
		m.failTool(r.callID, fmt.Sprintf("asyncagents_task: task %s was cleared before it could be resumed; start a new task with asyncagents_task", r.taskID))
		return
	}
	var s struct {
		ID string `json:"id"`
	}
	if ev.OK {
		_ = json.Unmarshal(ev.Result, &s)
	}
	if !ev.OK || s.ID == "" {
		m.failTool(r.callID, fmt.Sprintf("asyncagents_task: the session of task %s no longer exists (%s); start a new task with asyncagents_task(description, prompt, agent) instead", t.ID, strings.TrimSpace(ev.Error)))
		return
	}
	if t.Status != task.StatusCompleted {
		// Another resume won the race while the session was checked.
		m.failTool(r.callID, fmt.Sprintf("asyncagents_task: task %s is %s now; only a completed task can be resumed", t.ID, t.Status))
		return
	}
	t.Status = task.StatusResumed
	t.ResumeCount++
	t.ResumedAt = m.now
	t.CompletedAt = 0
	t.Result, t.Error, t.RetrievedAt = "", nil, 0
	t.BatchID, t.ParentMessageID = batchID(r.sessionID, r.messageID), r.messageID
	m.indexTask(t)
	if r.agent != "" {
		t.ParentAgent = r.agent
	}
	t.msg, t.promptSent, t.sessionError = nil, false, nil
	t.Progress.LastUpdate = m.now
	// The follow-up goes to the model that answered last. With a fallback chain it is an
	// attempt like the task's own: a provider error or silence moves it to the next model of
	// the chain, which gets the follow-up (promptText).
	t.resumePrompt = r.prompt
	t.compacted = false
	m.skipOpenCircuit(t)
	m.beginAttempt(t, false)
	m.touch(t)
	m.sendPrompt(t)
	m.tmuxOpen(t)
	m.replyTool(r.callID, fmt.Sprintf(`%sagent: %s
description: %s
status: resumed
resume: #%d

The follow-up runs in the task's own session, with its whole conversation. Its answer arrives in this conversation as a notice (Resume #%d); to wait for it now, call asyncagents_output(task_id="%s", block=true).`, t.idLines(), t.Agent, t.Description, t.ResumeCount, t.ResumeCount, t.ID),
		t.metadata(fmt.Sprintf("resume #%d: %s", t.ResumeCount, t.Description)))
	m.armPoll()
}
