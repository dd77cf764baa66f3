package core

import "github.com/asyncagents/asyncagents/core/task"

// The start queue: at most config.Config.MaxConcurrentStarts children run at once. A task beyond that
// has its ID at once and waits, queued and with no session (nothing idle sits in OpenCode), until
// a running task ends. Cancelling a queued task just takes it out.

// runningCount is how many tasks hold a start slot.
func (m *Machine) runningCount() int {
	n := 0
	for _, t := range m.activeTasks() {
		if !t.Queued {
			n++
		}
	}
	return n
}

// admit decides whether a new task starts now (true: the caller starts it, once the tool has
// its answer) or waits in the queue because every slot is taken.
func (m *Machine) admit(t *run) bool {
	if m.runningCount() > m.cfg.MaxConcurrentStarts { // t itself is already counted
		t.Queued = true
		m.touch(t)
		return false
	}
	return true
}

// startQueued starts queued tasks, oldest first, while slots are free.
func (m *Machine) startQueued() {
	running := m.runningCount()
	for _, t := range m.activeTasks() {
		if running >= m.cfg.MaxConcurrentStarts {
			return
		}
		if t.Queued {
			t.Queued = false
			t.StartedAt = m.now
			m.touch(t)
			m.startTask(t)
			running++
		}
	}
}

// queuePosition is how many queued tasks are ahead of t, plus one.
func (m *Machine) queuePosition(t *run) int {
	pos := 0
	for _, q := range m.activeTasks() {
		if q.Queued {
			pos++
			if q.ID == t.ID {
				return pos
			}
		}
	}
	return pos
}

// startTask creates the child session if the task has none yet, then sends the child its prompt;
// a forked child gets its context first.
func (m *Machine) startTask(t *run) {
	if t.SessionID == "" {
		if !t.creating {
			m.createSession(t)
		}
		return
	}
	if t.IsForked && !t.forkReady {
		m.startFork(t)
		return
	}
	m.beginAttempt(t, false)
	m.sendPrompt(t)
	m.tmuxOpen(t) // a queued task gets its pane now, when it starts
}

// sendPrompt gives the child the task's prompt, on the current attempt's model.
func (m *Machine) sendPrompt(t *run) {
	t.promptAskedAt = m.now
	m.request(Effect{
		Kind:      EffectPromptAsync,
		SessionID: t.SessionID,
		TaskID:    t.ID,
		Agent:     t.Agent,
		Parts:     []TextPart{{Type: "text", Text: t.promptText()}},
	}.withModel(t.Model), pending{taskID: t.ID})
}

// promptText is what the child is asked: the task's prompt, or during a resume its follow-up.
func (t *run) promptText() string {
	if t.Status == task.StatusResumed && t.resumePrompt != "" {
		return t.resumePrompt
	}
	return t.Prompt
}
