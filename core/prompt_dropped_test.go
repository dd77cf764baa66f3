package core

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
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

// A prompt sent after an earlier answer in the session (a turn it could have joined the end
// of), unanswered past the grace period, is sent again.
func TestAPromptAfterAnEarlierAnswerIsSentAgain(t *testing.T) {
	h := newFB(t, chainAB)
	id := h.launch()
	sentAt := h.now
	h.now += promptDropGraceMs + 100
	earlier := fmt.Sprintf(`[
		{"info":{"id":"msg_a0","role":"assistant","time":{"created":%d,"completed":%d}}},
		{"info":{"id":"msg_u1","role":"user","time":{"created":%d}}}]`, sentAt-2000, sentAt-1000, sentAt+1)
	require.Len(t, prompts(h.pollWith(earlier), id), 1)
}

// A child's first prompt that is slow to start (a loaded machine, a worker's instance still
// starting) is not sent again, however long the session sits idle: there was no turn for it to
// join, so nothing dropped it. It used to be sent twice more, each one more copy of the task's
// prompt in the child's context.
func TestAFirstPromptSlowToStartIsNotSentAgain(t *testing.T) {
	h := newFB(t, chainAB)
	id := h.launch()
	sentAt := h.now
	for _, msgs := range []string{
		`[]`, // OpenCode has not written the prompt yet
		fmt.Sprintf(`[{"info":{"id":"msg_u1","role":"user","time":{"created":%d}}}]`, sentAt+1),
	} {
		for i := 1; i <= 2*maxPromptResends+1; i++ {
			h.now = sentAt + promptDropGraceMs*int64(i) + 100
			require.Empty(t, prompts(h.pollWith(msgs), id), "poll %d over %s", i, msgs)
		}
	}
	h.busy(id)
	h.answer(id, "", "late, but once")
	tk, _ := h.m.Task(id)
	require.Equal(t, task.StatusCompleted, tk.Status)
	require.Equal(t, "late, but once", tk.Result)
}

// The next model's prompt after an attempt that failed before it wrote anything may still have
// joined that attempt's end: it is sent again, with no answer in the session at all.
func TestANextModelsPromptIsSentAgainWithNoAnswerBefore(t *testing.T) {
	h := newFB(t, chainAB)
	id := h.launch()
	h.busy(id)
	h.oc("session.error", fmt.Sprintf(`{"sessionID":%q,"error":%s}`, id, rateLimited))
	eff := h.oc("session.idle", fmt.Sprintf(`{"sessionID":%q}`, id))
	rd := ofKind(eff, EffectMessages)
	require.Len(t, rd, 1)
	onlyPrompt := fmt.Sprintf(`[{"info":{"id":"msg_u1","role":"user","time":{"created":%d}}}]`, h.now-20)
	h.step(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true, Result: json.RawMessage(onlyPrompt)})
	// With no failed message to complete, the poll that finds the session quiet ends the turn.
	st := ofKind(h.step(Event{Type: EventTimer, TimerID: pollTimer}), EffectStatus)
	require.Len(t, st, 1)
	eff = h.step(Event{Type: EventEffectDone, EffectID: st[0].ID, OK: true, Result: json.RawMessage(`{}`)})
	require.Len(t, prompts(eff, id), 1, "the next model is prompted")
	require.Equal(t, "mock/mock-b", prompts(eff, id)[0].Model)
	sentAt := h.now
	h.now = sentAt + promptDropGraceMs + 100
	again := prompts(h.pollWith(fmt.Sprintf(`[
		{"info":{"id":"msg_u1","role":"user","time":{"created":%d}}},
		{"info":{"id":"msg_u2","role":"user","time":{"created":%d}}}]`, sentAt-30, sentAt+1)), id)
	require.Len(t, again, 1)
	require.Equal(t, "mock/mock-b", again[0].Model)
}

// A prompt whose request failed on a worker that was down may never have arrived: once the worker
// is back and the grace period has passed, a session with nothing in it gets the prompt again.
func TestAPromptToADownWorkerIsSentAgainIfItNeverArrived(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	h.run(Event{Type: EventStart})
	h.state("w1", false, "connection reset")
	h.promptErr = "connection reset"
	r, _ := h.launchOn("a", "w1")
	tk := h.taskOf(r)
	require.Equal(t, task.StatusRunning, tk.Status, "a failed request on a down worker fails nothing")
	h.promptErr = ""
	sentAt := h.now
	check := func(eff []Effect) []Effect {
		st := ofKind(eff, EffectStatus)
		require.Len(t, st, 1)
		rd := ofKind(h.run(Event{Type: EventEffectDone, EffectID: st[0].ID, OK: true, Result: json.RawMessage(`{}`)}), EffectMessages)
		require.Len(t, rd, 1)
		return h.run(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true, Result: json.RawMessage(`[]`)})
	}
	require.Empty(t, prompts(check(h.state("w1", true, "")), tk.SessionID), "within the grace period")
	h.now = sentAt + promptDropGraceMs + 100
	again := prompts(check(h.poll()), tk.SessionID)
	require.Len(t, again, 1, "the prompt that never arrived is sent again")
	require.Equal(t, "w1", again[0].Worker)
	h.now += promptDropGraceMs + 100
	require.Empty(t, prompts(check(h.poll()), tk.SessionID), "OpenCode accepted this one: a slow start")
}
