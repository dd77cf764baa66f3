package core

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/core/view"
)

// resumeReq is a resume between its tool call and the check that the task's session still exists.
type resumeReq struct {
	callID, taskID, prompt, sessionID, messageID, agent string
	// timeoutMs is the resume's own wall-clock limit, 0 to keep the task's.
	timeoutMs int64
	// budget replaces the task's budget when the resume gave one (a budget counts every run).
	budget *task.Budget
}

// onResumeCall validates asyncagents_task(resume: …, prompt: …) and checks the session exists.
func (m *Machine) onResumeCall(ev Event, a taskArgs, timeoutMs int64, budget *task.Budget) {
	fail := func(format string, args ...any) {
		m.failTool(ev.CallID, "asyncagents_task: "+fmt.Sprintf(format, args...))
	}
	id := strings.TrimSpace(a.Resume)
	t := m.task(id)
	switch {
	case a.Fork:
		fail(resumeWithFork)
	case strings.TrimSpace(a.Prompt) == "":
		fail(resumeNoPrompt)
	case t == nil:
		fail(resumeNoTaskFmt, quote(id))
	case t.ParentSessionID != ev.SessionID:
		fail(resumeOtherSessionFmt, t.ID)
	case t.Status == task.StatusResumed:
		fail(resumeUnderWayFmt, t.ID, t.ResumeCount)
	case t.Status != task.StatusCompleted:
		fail(resumeNotCompletedFmt, t.ID, t.Status)
	case worktreeGone(t):
		fail(resumeWorktreeGoneFmt, t.ID, t.Worktree.Merge)
	case t.Worker != "" && t.Worktree != nil:
		fail(resumeRemoteIsolatedFmt, t.ID, t.Worker)
	default:
		r := &resumeReq{callID: ev.CallID, taskID: t.ID, prompt: a.Prompt, sessionID: ev.SessionID, messageID: ev.MessageID, agent: ev.Agent, timeoutMs: timeoutMs}
		if a.Budget != nil {
			r.budget = &task.Budget{} // all zero: the resume lifts the limits
			if budget != nil {
				r.budget = budget
			}
		}
		m.request(Effect{Kind: EffectSessionGet, SessionID: t.SessionID, TaskID: t.ID}, pending{taskID: t.ID, resume: r})
	}
}

// onResumeChecked resumes the task once its session is known to exist.
func (m *Machine) onResumeChecked(p pending, ev Event) {
	r := p.resume
	t := m.task(r.taskID)
	if t == nil {
		m.failTool(r.callID, fmt.Sprintf(resumeClearedFmt, r.taskID))
		return
	}
	var s struct {
		ID string `json:"id"`
	}
	if ev.OK {
		_ = json.Unmarshal(ev.Result, &s)
	}
	if !ev.OK || s.ID == "" {
		m.failTool(r.callID, fmt.Sprintf(resumeSessionGoneFmt, t.ID, strings.TrimSpace(ev.Error)))
		return
	}
	if t.Status != task.StatusCompleted {
		// Another resume won the race while the session was checked.
		m.failTool(r.callID, fmt.Sprintf(resumeNotCompletedNowFmt, t.ID, t.Status))
		return
	}
	t.Status = task.StatusResumed
	if t.Worktree != nil {
		t.Worktree.Merge = "" // at work again in its worktree: its end commits anew
	}
	if r.timeoutMs > 0 {
		t.TimeoutMs = r.timeoutMs
	}
	if r.budget != nil {
		t.Budget = r.budget
		if *r.budget == (task.Budget{}) {
			t.Budget = nil
		}
	}
	t.ResumeCount++
	t.ResumedAt = m.now
	t.CompletedAt = 0
	t.Result, t.Error, t.RetrievedAt = "", nil, 0
	t.BatchID, t.ParentMessageID = batchID(r.sessionID, r.messageID), r.messageID
	m.indexTask(t)
	if r.agent != "" {
		t.ParentAgent = r.agent
	}
	t.msg, t.promptSent, t.sessionError, t.promptResends = nil, false, nil, 0
	t.Progress.LastUpdate = m.now
	// The follow-up's work is its own: the partial work of the run before it is its answer.
	t.Partial, t.toolCallIDs, t.textAt, t.latestText = nil, nil, 0, ""
	m.clearStall(t)
	// The follow-up goes to the model that answered last. With a fallback chain it is an
	// attempt like the task's own: a provider error or silence moves it to the next model of
	// the chain, which gets the follow-up (promptText).
	t.resumePrompt = r.prompt
	t.compacted = false
	m.skipOpenCircuit(t)
	m.touch(t)
	reply := fmt.Sprintf(resumedFmt, t.idLines(), t.Agent, t.Description, t.ResumeCount, t.ResumeCount, t.ID)
	// A resume runs the child again: it takes a start slot like a launch, under
	// maxConcurrentStarts and its model's (or provider's) limit, and waits its turn when they
	// are taken (startQueued sends the follow-up then).
	if m.admit(t) {
		m.startResume(t)
	} else {
		reply += fmt.Sprintf(resumeQueuedFmt, view.Waiting(t.Waiting))
	}
	m.replyTool(r.callID, reply, t.metadata(fmt.Sprintf(resumeTitleFmt, t.ResumeCount, t.Description)))
	m.armPoll()
}

// startResume sends a resumed task's follow-up to its child, once it has a start slot.
func (m *Machine) startResume(t *run) {
	if t.Worker != "" {
		m.wake(t.Worker)
	}
	m.beginAttempt(t, false)
	m.sendPrompt(t)
	m.tmuxOpen(t)
}
