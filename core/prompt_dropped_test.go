package core

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// pollWith fires the poll, answers session.status with nothing busy and the messages read with
// msgs, and returns the effects of that last answer.
func (h *fbHarness) pollWith(msgs string) []Effect {
	eff := h.step(Event{Type: EventTimer, TimerID: pollTimer})
	st := ofKind(eff, EffectStatus)
	require.Len(h.t, st, 1)
	eff = h.step(Event{Type: EventEffectDone, EffectID: st[0].ID, OK: true, Result: json.RawMessage(`{}`)})
	rd := ofKind(eff, EffectMessages)
	require.Len(h.t, rd, 1)
	return h.step(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true, Result: json.RawMessage(msgs)})
}

// After the switch to B the session sits idle and nothing answers B's prompt: OpenCode dropped
// it. The poll sends it again, to B, once the grace period has passed, and at most twice.
func TestADroppedPromptIsSentAgain(t *testing.T) {
	h := newFB(t, chainAB)
	id := h.launch()
	h.busy(id)
	failedAt := h.now
	eff := h.answer(id, rateLimited, "")
	require.Equal(t, "mock/mock-b", prompts(eff, id)[0].Model)
	sentAt := h.now
	// What OpenCode holds: the first prompt, A's failed answer, and B's prompt unanswered.
	unanswered := fmt.Sprintf(`[
		{"info":{"id":"msg_u1","role":"user","time":{"created":%d}}},
		{"info":{"id":"msg_a","role":"assistant","error":%s,"time":{"created":%d,"completed":%d}}},
		{"info":{"id":"msg_u2","role":"user","time":{"created":%d}}}]`, failedAt-5, rateLimited, failedAt+1, failedAt+2, sentAt+1)

	h.now = sentAt + promptDropGraceMs/2
	require.Empty(t, prompts(h.pollWith(unanswered), id), "within the grace period a slow start is not a dropped prompt")

	for i := range maxPromptResends {
		h.now = sentAt + promptDropGraceMs*int64(i+1) + 100
		again := prompts(h.pollWith(unanswered), id)
		require.Len(t, again, 1, "resend %d", i+1)
		require.Equal(t, "mock/mock-b", again[0].Model)
		require.Equal(t, "look around", again[0].Parts[0].Text)
		sentAt = h.now
	}
	h.now += 2 * promptDropGraceMs
	require.Empty(t, prompts(h.pollWith(unanswered), id), "a session that keeps dropping prompts is left to the liveness checks")

	h.busy(id)
	h.answer(id, "", "B at last")
	tk, _ := h.m.Task(id)
	require.Equal(t, "B at last", tk.Result)
}

// An answer begun after the prompt means OpenCode took it: no resend, however long ago it was sent.
func TestAnAnsweredPromptIsNotSentAgain(t *testing.T) {
	h := newFB(t, chainAB)
	id := h.launch()
	sentAt := h.now
	h.now += 10 * promptDropGraceMs
	begun := fmt.Sprintf(`[
		{"info":{"id":"msg_u1","role":"user","time":{"created":%d}}},
		{"info":{"id":"msg_a","role":"assistant","time":{"created":%d}}}]`, sentAt+1, sentAt+2)
	require.Empty(t, prompts(h.pollWith(begun), id))
}
