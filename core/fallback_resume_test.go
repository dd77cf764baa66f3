package core

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// resume asks for a follow-up on task id and answers the check that its session exists.
func (h *fbHarness) resume(id, prompt string) []Effect {
	eff := h.step(Event{Type: EventToolCall, CallID: "call_resume_" + id, Tool: ToolTask, SessionID: "ses_p", MessageID: "msg_p2",
		Args: json.RawMessage(fmt.Sprintf(`{"resume":%q,"prompt":%q}`, id, prompt))})
	get := ofKind(eff, EffectSessionGet)
	require.Len(h.t, get, 1, "a resume checks the session first")
	return h.step(Event{Type: EventEffectDone, EffectID: get[0].ID, OK: true, Result: json.RawMessage(fmt.Sprintf(`{"id":%q}`, id))})
}

// completedOnA launches a task on the chain A, B and has A answer it.
func completedOnA(t *testing.T) (*fbHarness, string) {
	h := newFB(t, chainAB)
	id := h.launch()
	h.busy(id)
	h.answer(id, "", "first answer")
	tk, _ := h.m.Task(id)
	require.Equal(t, task.StatusCompleted, tk.Status)
	return h, id
}

// A resume is an attempt like the task's own: a provider error on the model that answered last
// moves the follow-up (not the task's first prompt) to the next model of the chain, and the
// resume completes there.
func TestResumeFallsBackWithItsFollowUp(t *testing.T) {
	h, id := completedOnA(t)
	eff := h.resume(id, "FOLLOW UP")
	sent := prompts(eff, id)
	require.Len(t, sent, 1)
	require.Equal(t, "mock/mock-a", sent[0].Model, "the follow-up goes to the model that answered last")
	require.Equal(t, "FOLLOW UP", sent[0].Parts[0].Text)

	h.busy(id)
	eff = h.answer(id, rateLimited, "")
	next := prompts(eff, id)
	require.Len(t, next, 1, "B gets the follow-up")
	require.Equal(t, "mock/mock-b", next[0].Model)
	require.Equal(t, "FOLLOW UP", next[0].Parts[0].Text, "the follow-up, not the task's first prompt")
	tk, _ := h.m.Task(id)
	require.Equal(t, task.StatusResumed, tk.Status)

	h.busy(id)
	eff = h.answer(id, "", "deeper, on B")
	tk, _ = h.m.Task(id)
	require.Equal(t, task.StatusCompleted, tk.Status)
	require.Equal(t, "deeper, on B", tk.Result)
	info := tk.FallbackInfo
	require.Equal(t, "mock/mock-b", info.SuccessfulModel)
	require.Len(t, info.Attempts, 3, "the first run, the resume on A, the resume on B")
	require.Equal(t, "rate_limit", info.Attempts[1].Class)
	var notice string
	for _, e := range prompts(eff, "ses_p") {
		notice = e.Parts[0].Text
	}
	require.Contains(t, notice, "Resume #1 completed")
	require.Contains(t, notice, "Model: mock/mock-b (fallback after mock/mock-a (rate_limit))")

	// The follow-up belonged to that resume: a fallback of the next run sends its own prompt.
	h.resume(id, "SECOND FOLLOW UP")
	h.busy(id)
	eff = h.oc("session.status", fmt.Sprintf(`{"sessionID":%q,"status":{"type":"retry","attempt":1,"message":"Rate limit exceeded","next":1}}`, id))
	require.Empty(t, ofKind(eff, EffectAbort), "B is the chain's last model: OpenCode's own retries go on")
}

// OpenCode retrying a provider error during a resume: the attempt is aborted and the next model
// gets the follow-up. (It used to get the task's first prompt: the child did the first job again
// and its answer came back as the resume's.)
func TestResumeRetryStatusSendsTheFollowUpToTheNextModel(t *testing.T) {
	h, id := completedOnA(t)
	h.resume(id, "FOLLOW UP")
	h.busy(id)
	eff := h.oc("session.status", fmt.Sprintf(`{"sessionID":%q,"status":{"type":"retry","attempt":1,"message":"Rate limit exceeded","next":%d}}`, id, h.now+2000))
	abort := ofKind(eff, EffectAbort)
	require.Len(t, abort, 1)
	h.oc("message.updated", fmt.Sprintf(`{"info":{"id":"msg_run","sessionID":%q,"role":"assistant","error":{"name":"MessageAbortedError","data":{"message":"The operation was aborted."}},"time":{"created":%d,"completed":%d}}}`, id, h.now-5, h.now))
	h.oc("session.idle", fmt.Sprintf(`{"sessionID":%q}`, id))
	eff = h.step(Event{Type: EventEffectDone, EffectID: abort[0].ID, OK: true})
	next := prompts(eff, id)
	require.Len(t, next, 1)
	require.Equal(t, "mock/mock-b", next[0].Model)
	require.Equal(t, "FOLLOW UP", next[0].Parts[0].Text)
}

// A resume still at work when OpenCode stopped is restored without its follow-up (it is not in
// the history): it does not fall back, since the next model could only be sent the task's first
// prompt. A retry is left to OpenCode, and a provider error ends the resume as before.
func TestRestoredResumeDoesNotFallBack(t *testing.T) {
	tk := task.Task{ID: "ses_r", ParentSessionID: "ses_p", ParentMessageID: "msg_p", BatchID: "msg_p", Description: "survey", Prompt: "look around",
		Agent: "general", Status: task.StatusResumed, StartedAt: 900_000, ResumedAt: 950_000, ResumeCount: 1, Depth: 1,
		Progress: task.Progress{LastTools: []string{}, LastUpdate: 950_000},
		Models:   []string{"mock/mock-a", "mock/mock-b"}, Model: "mock/mock-a",
		FallbackInfo: &task.FallbackInfo{Attempts: []task.FallbackAttempt{{Model: "mock/mock-a", Timestamp: 900_000, Success: true}}, TotalAttempts: 1, SuccessfulModel: "mock/mock-a"}}
	h := newFB(t, chainAB)
	res, _ := h.m.Restore(h.now, HistoryLine(tk))
	require.Equal(t, 1, res.Restored)

	h.busy("ses_r")
	eff := h.oc("session.status", `{"sessionID":"ses_r","status":{"type":"retry","attempt":1,"message":"Rate limit exceeded","next":1}}`)
	require.Empty(t, ofKind(eff, EffectAbort), "the retry is OpenCode's")
	eff = h.answer("ses_r", rateLimited, "")
	require.Empty(t, prompts(eff, "ses_r"), "no prompt to the next model")
	got, _ := h.m.Task("ses_r")
	require.Equal(t, task.StatusError, got.Status)
	require.Contains(t, got.Error.Message, "Rate limit")
}

// The chain index is not in the history: a task restored after answering on B (the chain's last
// model) finds its place from its model. Its resume goes to B, and B's failure ends the resume
// rather than "falling back" to B again.
func TestRestoredTaskKnowsItsPlaceInTheChain(t *testing.T) {
	tk := task.Task{ID: "ses_b", ParentSessionID: "ses_p", ParentMessageID: "msg_p", BatchID: "msg_p", Description: "survey", Prompt: "look around",
		Agent: "general", Status: task.StatusCompleted, StartedAt: 900_000, CompletedAt: 910_000, Result: "done on B", Depth: 1,
		Progress: task.Progress{LastTools: []string{}, LastUpdate: 910_000},
		Models:   []string{"mock/mock-a", "mock/mock-b"}, Model: "mock/mock-b",
		FallbackInfo: &task.FallbackInfo{Occurred: true, SuccessfulModel: "mock/mock-b", TotalAttempts: 2, Attempts: []task.FallbackAttempt{
			{Model: "mock/mock-a", Timestamp: 900_000, Error: "Rate limit", Class: "rate_limit"},
			{Model: "mock/mock-b", Timestamp: 905_000, Success: true}}}}
	h := newFB(t, chainAB)
	res, _ := h.m.Restore(h.now, HistoryLine(tk))
	require.Equal(t, 1, res.Restored)

	eff := h.resume("ses_b", "FOLLOW UP")
	sent := prompts(eff, "ses_b")
	require.Len(t, sent, 1)
	require.Equal(t, "mock/mock-b", sent[0].Model)
	h.busy("ses_b")
	eff = h.answer("ses_b", rateLimited, "")
	require.Empty(t, prompts(eff, "ses_b"), "B was the last model: no attempt on B again")
	got, _ := h.m.Task("ses_b")
	require.Equal(t, task.StatusError, got.Status)
}

// A model whose circuit opened after it answered the task is skipped by the task's resume, as a
// launch skips it; with no healthy model after it, the resume stays on it.
func TestResumeSkipsAModelWhoseCircuitOpened(t *testing.T) {
	h, id := completedOnA(t)
	h.m.RestoreHealth(fmt.Sprintf(`{"version":1,"models":{"mock/mock-a":{"failures":3,"openUntil":%d}}}`, h.now+1e7))
	eff := h.resume(id, "FOLLOW UP")
	sent := prompts(eff, id)
	require.Len(t, sent, 1)
	require.Equal(t, "mock/mock-b", sent[0].Model)
	require.Equal(t, "FOLLOW UP", sent[0].Parts[0].Text)
	tk, _ := h.m.Task(id)
	require.Equal(t, []string{"mock/mock-a"}, tk.FallbackInfo.Skipped)
	h.busy(id)
	h.answer(id, "", "on B")
	tk, _ = h.m.Task(id)
	require.Equal(t, task.StatusCompleted, tk.Status)
	require.Equal(t, "mock/mock-b", tk.FallbackInfo.SuccessfulModel)

	// Every circuit open: the resume goes to the model that answered last.
	h.m.RestoreHealth(fmt.Sprintf(`{"version":1,"models":{"mock/mock-a":{"failures":3,"openUntil":%d},"mock/mock-b":{"failures":3,"openUntil":%d}}}`, h.now+1e7, h.now+1e7))
	eff = h.resume(id, "AGAIN")
	require.Equal(t, "mock/mock-b", prompts(eff, id)[0].Model)
}
