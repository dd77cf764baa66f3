package core

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/httpapi"
	"github.com/asyncagents/asyncagents/core/task"
)

// A held child waits for the end notice of an isolated task of its own, which waits for the
// worktree's commit: the task has ended, but its notice is not out yet.
func TestAHeldChildWaitsForItsIsolatedTasksCommit(t *testing.T) {
	h := newWT(t, config.Config{})
	lead, _, _ := h.launchIso("lead", "")
	c := h.m.task(lead).SessionID
	h.busy(c)
	eff := h.run(Event{Type: EventToolCall, CallID: "call_iso", Tool: ToolTask, SessionID: c, MessageID: "msg_c",
		Args: json.RawMessage(`{"description":"iso","prompt":"work","agent":"general","isolation":"worktree"}`)})
	n, _ := ofKind(eff, EffectToolReply)[0].Metadata["taskId"].(string)
	require.NotEmpty(t, n)
	require.False(t, h.turnEnd("hook_1", c))
	h.files[n] = `[{"path":"a.go","added":1,"removed":0}]`
	h.hold[EffectWorktreeCommit] = true
	eff = h.finishChild(n)
	require.Equal(t, task.StatusCompleted, h.status(n))
	require.False(t, replied(eff, "hook_1"), "its notice waits for the commit")
	eff = h.release()
	require.Len(t, prompts(eff, c), 1, "the notice, once committed")
	require.False(t, replied(eff, "hook_1"))
	require.True(t, replied(h.userMessage(c, h.now), "hook_1"))
}

// A subagent that the lead's child runs with OpenCode's task tool is held for its own task: the
// lead gives that task its slot under maxConcurrentStarts.
func TestASubagentBelowAChildIsHeldWithItsTasksSlot(t *testing.T) {
	h := newFB(t, config.Config{MaxConcurrentStarts: 1})
	_, c := h.busyLead()
	h.subagent(c, "ses_s")
	n := h.launchFrom("ses_s", "N")
	require.True(t, h.m.task(n).Queued, "the lead holds the only slot")
	require.False(t, h.turnEnd("hook_1", "ses_s"))
	require.False(t, h.m.task(n).Queued, "the lead's slot went to the subagent's task")
	h.answer(h.m.task(n).SessionID, "", "result N")
	require.True(t, replied(h.userMessage("ses_s", h.now), "hook_1"), "N's slot is the lead's again")
}

// Notices that do not wake a held child (one of a batch whose other task was then cancelled from
// the dashboard) are not left for its idle: they go, waking it, once nothing else will come.
func TestAHeldChildGetsNoticesThatWouldNotWakeIt(t *testing.T) {
	h := newFB(t, config.Config{})
	_, c := h.busyLead()
	n1 := h.launchFrom(c, "N1")
	n2 := h.launchFrom(c, "N2")
	require.False(t, h.turnEnd("hook_1", c))
	eff := h.all(func() { h.answer(h.m.task(n1).SessionID, "", "result N1") })
	require.Empty(t, prompts(eff, c), "N2 still runs: N1's notice waits")
	hd := map[string]string{"host": "127.0.0.1:5165", "origin": "http://127.0.0.1:5165", "authorization": "Bearer tok"}
	h.now += 10
	r, eff := h.m.ServeHTTPEffects(httpapi.Request{Method: "POST", Path: "/v1/tasks/" + n2 + "/cancel", Port: 5165, Headers: hd}, config.APIConfig{Token: "tok"}, h.now)
	require.Equal(t, 200, r.Status, r.Body)
	wakes := prompts(eff, c)
	require.Len(t, wakes, 1, "N1's result and N2's cancel go together")
	require.False(t, wakes[0].NoReply, "waking the held child")
	require.Contains(t, fmt.Sprint(wakes[0].Parts), "result N1")
	require.False(t, replied(eff, "hook_1"))
}

// A session error on a held child whose task gave up its slot does not let it run past the
// limit: it waits for a slot as any task whose wait is over.
func TestASessionErrorOnAHeldChildKeepsTheLimit(t *testing.T) {
	h := newFB(t, config.Config{MaxConcurrentStarts: 1})
	_, c := h.busyLead()
	n := h.launchFrom(c, "N")
	require.False(t, h.turnEnd("hook_1", c))
	require.False(t, h.m.task(n).Queued)
	eff := h.oc("session.error", fmt.Sprintf(`{"sessionID":%q,"error":{"name":"UnknownError","data":{"message":"could not store"}}}`, c))
	require.False(t, replied(eff, "hook_1"), "N has the only slot")
	eff = h.all(func() { h.answer(h.m.task(n).SessionID, "", "result N") })
	require.False(t, replied(eff, "hook_1"), "N's notice is on its way")
	require.True(t, replied(h.userMessage(c, h.now), "hook_1"))
}

// A task whose held child waits for its slot back shows where it waits, as a queued task does.
func TestAReadyTaskShowsItsWait(t *testing.T) {
	h := newFB(t, config.Config{MaxConcurrentStarts: 1})
	_, c := h.busyLead()
	n := h.launchFrom(c, "N")
	require.False(t, h.turnEnd("hook_1", c))
	q := h.launchFrom("ses_p", "Q")
	h.answer(h.m.task(n).SessionID, "", "result N")
	require.False(t, h.m.task(q).Queued)
	h.userMessage(c, h.now)
	list := h.call(ToolList, `{}`)
	require.Contains(t, list.Output, "queued (position 1 in the queue of maxConcurrentStarts")
}

// A held subagent aborted (OpenCode reports it idle at once, its error only once the hook is
// answered) is let go at its idle.
func TestAnAbortedHeldSubagentIsLetGoAtItsIdle(t *testing.T) {
	h := newFB(t, config.Config{})
	h.subagent("ses_p", "ses_sub")
	h.launchFrom("ses_sub", "N")
	require.False(t, h.turnEnd("hook_1", "ses_sub"))
	eff := h.oc("session.status", `{"sessionID":"ses_sub","status":{"type":"idle"}}`)
	require.True(t, replied(eff, "hook_1"))
}

// A notice that wakes the child (a failure) stored while its answer was still being written is
// newer than that answer: the loop answers it, so the answer's end is not held for the others.
func TestAWakeStoredDuringTheAnswerIsNotWaitedFor(t *testing.T) {
	h := newFB(t, config.Config{})
	_, c := h.busyLead()
	n1 := h.launchFrom(c, "N1")
	h.launchFrom(c, "N2")
	began := h.now
	h.oc("message.updated", fmt.Sprintf(`{"info":{"id":"msg_ans","sessionID":%q,"role":"assistant","time":{"created":%d}}}`, c, began))
	eff := h.all(func() { h.answer(h.m.task(n1).SessionID, `{"name":"APIError","data":{"message":"boom"}}`, "") })
	require.Len(t, prompts(eff, c), 1, "a failure wakes the child at once")
	h.userMessage(c, h.now)
	eff = h.step(Event{Type: EventToolCall, CallID: "hook_1", Tool: HookTurnEnd, SessionID: c, MessageID: "msg_ans"})
	require.True(t, replied(eff, "hook_1"), "its model reads the failure now, N2 still running")
}

// The same for a subagent OpenCode's task tool runs, and for a headless run's own session: a
// failure stored while the answer was written is answered at once, the other task still running.
func TestAWakeStoredDuringASubagentsAnswerIsNotWaitedFor(t *testing.T) {
	for _, headless := range []bool{false, true} {
		t.Run(fmt.Sprintf("headless=%v", headless), func(t *testing.T) {
			cfg := config.Config{}
			session := "ses_sub"
			if headless {
				cfg.Headless.Active, session = true, "ses_p"
			}
			h := newFB(t, cfg)
			h.subagent("ses_p", "ses_sub")
			n1 := h.launchFrom(session, "N1")
			h.launchFrom(session, "N2")
			h.oc("message.updated", fmt.Sprintf(`{"info":{"id":"msg_ans","sessionID":%q,"role":"assistant","time":{"created":%d}}}`, session, h.now))
			h.now += 1000
			eff := h.all(func() { h.answer(h.m.task(n1).SessionID, `{"name":"APIError","data":{"message":"boom"}}`, "") })
			require.Len(t, prompts(eff, session), 1, "a failure wakes the session at once")
			h.userMessage(session, h.now)
			h.now += 1000
			eff = h.step(Event{Type: EventToolCall, CallID: "hook_1", Tool: HookTurnEnd, SessionID: session, MessageID: "msg_ans"})
			require.True(t, replied(eff, "hook_1"), "its model reads the failure now, N2 still running")
			// A later answer, begun after the wake, is held for N2.
			h.oc("message.updated", fmt.Sprintf(`{"info":{"id":"msg_next","sessionID":%q,"role":"assistant","time":{"created":%d}}}`, session, h.now))
			eff = h.step(Event{Type: EventToolCall, CallID: "hook_2", Tool: HookTurnEnd, SessionID: session, MessageID: "msg_next"})
			require.False(t, replied(eff, "hook_2"), "N2 is still running")
			if !headless {
				// The user's own session is never held outside a headless run: nothing kept of it.
				h.oc("message.updated", fmt.Sprintf(`{"info":{"id":"msg_u","sessionID":"ses_p","role":"assistant","time":{"created":%d}}}`, h.now))
				require.NotContains(t, h.m.headless.answers, "ses_p")
			}
		})
	}
}

// What is kept of a subagent's answer goes with its idle, and never grows past a bound.
func TestASubagentsAnswerIsForgottenAtItsIdle(t *testing.T) {
	h := newFB(t, config.Config{})
	for i := range maxSessionsBelow + 10 {
		sub := fmt.Sprintf("ses_sub%d", i)
		h.m.sessionsBelow.set(sub, "ses_p")
		h.m.noteAnswer(sub, "msg_a", h.now)
		if i == 0 {
			require.Contains(t, h.m.headless.answers, sub)
			h.oc("session.idle", fmt.Sprintf(`{"sessionID":%q}`, sub))
			require.NotContains(t, h.m.headless.answers, sub)
		}
	}
	require.LessOrEqual(t, len(h.m.headless.answers), maxSessionsBelow)
}
