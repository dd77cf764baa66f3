package core

import "github.com/asyncagents/asyncagents/core/task"

// startTask creates the child session if the task has none yet, then sends the child its prompt;
// a forked child gets its context first.
func (m *Machine) startTask(t *run) {
	if t.Worker != "" {
		m.wake(t.Worker)
	}
	if t.SessionID == "" {
		if m.prepareWorktree(t) {
			return
		}
		if t.unbound && !t.creating {
			m.findChild(t)
			return
		}
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
	t.promptAskedAt, t.promptUnsure = m.now, false
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
	if t.steerPrompt != "" {
		return t.steerPrompt
	}
	if t.Status == task.StatusResumed && t.resumePrompt != "" {
		return t.resumePrompt
	}
	return t.Prompt
}
