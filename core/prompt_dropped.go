package core

import "fmt"

// A prompt OpenCode accepted but never started. OpenCode 1.18 answers prompt_async at once and
// starts the session's loop later; a prompt that reaches a session still winding down a turn
// joins that turn's ending and is never answered. The fallback waits for the failed turn to
// settle before it prompts the next model, and that closes most of the window, not all of it: on
// a loaded machine the session can report idle a moment before its loop has let go. Nothing
// would ever answer such a task, so the poll looks for it and sends the prompt again.

const (
	// promptDropGraceMs: how long after a prompt was sent the session may sit idle with no
	// answer begun before the prompt counts as dropped. Well past the time OpenCode takes to
	// start a loop on a loaded machine, so a slow start is never prompted twice.
	promptDropGraceMs = 5000
	// maxPromptResends bounds the resends of one prompt: a session that keeps dropping prompts
	// is left to the liveness checks, which tell the parent.
	maxPromptResends = 2
)

// promptDropped says whether t's prompt was dropped: OpenCode accepted it (or it went to a worker
// that was down, and may never have arrived), the poll found the session not busy, a grace period
// has passed, no assistant message began after it was sent, and there was a turn it could have
// joined: an earlier answer in the session, or an attempt that failed before it wrote one. A
// child's first prompt that OpenCode accepted joins nothing; when it is slow to start (a loaded
// machine, a worker's instance still starting) it is slow, and sending it again only put the
// task's prompt in the child's context twice, its turns run again.
func (m *Machine) promptDropped(t *run, msgs []message) bool {
	if !t.promptSent || t.promptAskedAt == 0 || t.promptResends >= maxPromptResends ||
		m.now-t.promptAskedAt < promptDropGraceMs {
		return false
	}
	// It may be lost: it never arrived, or it joined the end of a turn before it (an earlier
	// attempt: this prompt's is the last).
	if m.answeredSincePrompt(t, msgs) {
		return false
	}
	lost := t.promptUnsure || t.FallbackInfo != nil && len(t.FallbackInfo.Attempts) > 1
	for _, msg := range msgs {
		lost = lost || msg.Info.Role == "assistant" // an answer before it: a turn it could join
	}
	return lost
}

// answeredSincePrompt reports whether an assistant message began after t's latest prompt was sent.
func (m *Machine) answeredSincePrompt(t *run, msgs []message) bool {
	since := m.ocTime(t, t.promptAskedAt)
	for _, msg := range msgs {
		if msg.Info.Role == "assistant" && msg.Info.Time.Created >= since {
			return true
		}
	}
	return false
}

// resendPrompt sends t's prompt again, to the same model: the dropped one was never answered, so
// the attempt goes on as it was.
func (m *Machine) resendPrompt(t *run) {
	t.promptResends++
	m.log("warn", fmt.Sprintf(promptDroppedFmt, t.ID, (m.now-t.promptAskedAt)/1000))
	t.promptSent = false
	m.sendPrompt(t)
}
