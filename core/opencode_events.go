package core

import (
	"github.com/asyncagents/asyncagents/core/ocevents"
	"github.com/asyncagents/asyncagents/core/task"
)

// SubscribedEvents are the OpenCode event types the core reads (ocevents.Subscribed).
func SubscribedEvents() []string { return ocevents.Subscribed() }

// onOpenCode handles an event of OpenCode's bus, from the local server.
func (m *Machine) onOpenCode(e OpenCodeEvent) { m.onDecoded(ocevents.Decode(e.Type, e.Properties)) }

// onDecoded handles an OpenCode event decoded once (ocevents.Decode), wherever it came from.
func (m *Machine) onDecoded(decoded any) {
	switch p := decoded.(type) {
	case ocevents.SessionIdle:
		m.idleWhileHeld(p.SessionID)
		m.onParentStatus(p.SessionID, false)
		m.onChildIdle(p.SessionID)
	case ocevents.SessionStatus:
		if p.Status.Type == "idle" {
			m.idleWhileHeld(p.SessionID)
			m.onParentStatus(p.SessionID, false)
			if t := m.task(p.SessionID); t != nil {
				m.clearRetry(t)
			}
			m.onChildIdle(p.SessionID)
		} else {
			m.onParentStatus(p.SessionID, true)
			if t := m.task(p.SessionID); t != nil && !t.Status.Terminal() {
				t.awaitBusy = false
				if p.Status.Type == "retry" {
					m.onChildRetry(t, p.Status.Message)
					m.noteRetry(t, task.Retry{Attempt: p.Status.Attempt, Message: p.Status.Message, Next: p.Status.Next})
				}
			}
		}
	case ocevents.SessionError:
		// A held turn end waits for nothing that will come: OpenCode reports a notice it took
		// and then failed to store (prompt_async answers first) as the session's error. One
		// whose task gave up its slot goes on through the queue (nested_turns.go).
		if p.Error.Name != ocevents.AbortedError && m.yielded(p.SessionID) {
			delete(m.headless.wokeAt, p.SessionID)
		} else {
			m.releaseSession(p.SessionID)
		}
		if p.Error.Name == ocevents.AbortedError {
			m.onTurnAborted(p.SessionID)
		}
		if t := m.task(p.SessionID); t != nil && !t.Status.Terminal() && !t.switching {
			t.sessionError = taskError(p.Error)
		}
	case ocevents.SessionDeleted:
		m.sessionModel.forget(p.Info.ID)
		m.forgetHeadless(p.Info.ID)
		m.onSessionDeleted(p.Info.ID)
	case ocevents.SessionCompacted:
		if m.task(p.SessionID) == nil {
			m.onParentCompacted(p.SessionID) // a child's own compaction is the fallback loop's (fallback.go)
		}
	case ocevents.SessionCreated:
		m.onSessionCreatedEvent(p)
	case ocevents.PermissionAsked:
		m.onPermissionAsked(p)
	case ocevents.PermissionReplied:
		m.onPermissionReplied(p)
	case ocevents.SessionUpdated:
		m.onSessionTitle(p.Info.ID, p.Info.Title)
	case ocevents.MessageUpdated:
		m.onMessageUpdated(p)
	case ocevents.PartUpdated:
		m.onPartUpdated(p)
	}
}

// onSessionTitle keeps a session's title, and gives it to the tasks it launched: a batch is
// named by its parent's title. The tasks are not written for it: their next history line
// carries it.
func (m *Machine) onSessionTitle(id, title string) {
	if m.sessionTitle.get(id) == title {
		return
	}
	m.sessionTitle.set(id, title)
	for _, t := range m.activeTasks() {
		if t.ParentSessionID == id {
			t.ParentTitle = title
		}
	}
}

// onChildIdle finishes a task whose child says it is idle: at once when the events described its
// last answer completely, else after reading its messages.
func (m *Machine) onChildIdle(sessionID string) {
	t := m.task(sessionID)
	if t == nil || t.Status.Terminal() || t.Queued {
		return
	}
	if t.switching {
		m.onIdleWhileSwitching(t)
		return
	}
	if t.awaitBusy {
		return // the previous attempt's idle: the new prompt has not started yet
	}
	if o, known := t.msg.outcome(); known {
		if o.err != nil && o.unsettled && t.FallbackInfo != nil {
			// The failed turn is still being written: a prompt for the next attempt sent now
			// would be dropped. Its completion and idle (or the poll) decide.
			return
		}
		m.finishWith(t, o, true)
		return
	}
	m.checkTask(t, true)
}

// onPartUpdated counts the child's tool calls for progress.
func (m *Machine) onPartUpdated(p ocevents.PartUpdated) {
	if t := m.task(p.Part.SessionID); t != nil && p.Part.Type == "tool" && p.Part.CallID != "" {
		// A tool at work (a long build, a test run) is the child working, not the model
		// hanging: the attempt timeout waits for it.
		if p.Part.State.Status == "pending" || p.Part.State.Status == "running" {
			if t.toolsRunning == nil {
				t.toolsRunning = map[string]bool{}
			}
			t.toolsRunning[p.Part.CallID] = true
		} else {
			delete(t.toolsRunning, p.Part.CallID)
		}
	}
	t := m.task(p.Part.SessionID)
	if t == nil && p.Part.Type == "step-finish" && p.Part.ID != "" {
		if up := m.taskBelow(p.Part.SessionID); up != nil && !up.Status.Terminal() {
			m.onStepFinished(up, p.Part.SessionID, p.Part.ID, "") // a subagent's call: the task's turn goes on
		}
		return
	}
	if t == nil || t.Status.Terminal() {
		return
	}
	t.Progress.LastUpdate = m.now
	m.onActivity(t)
	if p.Part.Type == "step-finish" && p.Part.ID != "" {
		m.onStepFinished(t, p.Part.SessionID, p.Part.ID, p.Part.Reason)
		return
	}
	if p.Part.Type == "text" {
		m.onTextPart(t, p.Part.ID, p.Part.MessageID, p.Part.Text, p.Part.Time.End != 0, p.Part.Synthetic || p.Part.Ignored)
		return
	}
	if p.Part.Type != "tool" || p.Part.CallID == "" {
		return
	}
	if t.seenCalls[p.Part.CallID] {
		m.noteToolRun(t, p.Part.CallID, p.Part.Tool, p.Part.State.Title, false)
		return
	}
	m.countToolCall(t, p.Part.CallID, p.Part.Tool, p.Part.State.Title)
}

// countToolCall counts a tool call of t's child the first time it is seen (callID not in
// seenCalls): its progress, its partial work's tools, its last tools.
func (m *Machine) countToolCall(t *run, callID, tool, title string) {
	if t.seenCalls == nil {
		t.seenCalls = map[string]bool{}
	}
	t.seenCalls[callID] = true
	t.Progress.ToolCalls++
	m.touchProgress(t)
	m.noteToolRun(t, callID, tool, title, true)
	t.Progress.LastTools = append(t.Progress.LastTools, tool)
	if n := len(t.Progress.LastTools); n > task.MaxLastTools {
		t.Progress.LastTools = append([]string{}, t.Progress.LastTools[n-task.MaxLastTools:]...)
	}
}

// onOpenCodeEvent takes one event of a stream ("" the local OpenCode's, or a worker's): once
// workers are configured, each place's events reach only its own tasks (onStreamEvent).
func (m *Machine) onOpenCodeEvent(worker string, e OpenCodeEvent) {
	if worker != "" || len(m.cfg.Workers) > 0 {
		m.onStreamEvent(worker, e)
		return
	}
	m.onOpenCode(e)
}
