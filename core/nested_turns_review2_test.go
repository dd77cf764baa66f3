package core

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/httpapi"
	"github.com/asyncagents/asyncagents/core/task"
)

// A message to a task with no task of its own, its child's answer ending before the message is
// stored: the hold waits for the message alone and keeps the slot (a queued task is not let in).
func TestASteeredChildHeldForItsMessageKeepsItsSlot(t *testing.T) {
	h := newFB(t, config.Config{MaxConcurrentStarts: 1})
	lead, c := h.busyLead()
	q := h.launchFrom("ses_p", "Q")
	h.call(ToolMessage, `{"task_id":"`+lead+`","message":"also check the tests"}`)
	require.False(t, h.turnEnd("hook_1", c), "held until the message is stored")
	require.True(t, h.m.task(q).Queued, "the lead keeps its slot")
	require.True(t, replied(h.userMessage(c, h.now), "hook_1"))
}

// A held session aborted (its idle comes first, its error once the hook is answered) has its
// tasks cancelled as any interrupted turn's.
func TestAnAbortedHeldSubagentsTasksAreCancelled(t *testing.T) {
	h := newFB(t, config.Config{})
	h.subagent("ses_p", "ses_sub")
	h.busy("ses_sub")
	n := h.launchFrom("ses_sub", "N")
	require.False(t, h.turnEnd("hook_1", "ses_sub"))
	eff := h.oc("session.status", `{"sessionID":"ses_sub","status":{"type":"idle"}}`)
	require.True(t, replied(eff, "hook_1"))
	h.abortTurn("ses_sub")
	require.Equal(t, task.StatusCancelled, h.status(n))
}

// A stall of a task whose parent is a task's child at work (not held) costs that child no turn;
// once the child is held, the stall wakes it, so its model decides.
func TestAStallWakesOnlyAHeldChild(t *testing.T) {
	h := newFB(t, warnAfter(60_000))
	_, c := h.busyLead()
	n := h.launchFrom(c, "N")
	h.busy(h.m.task(n).SessionID)
	for _, e := range prompts(h.wait(61_000), c) {
		require.True(t, e.NoReply, "a stall costs the busy child no model turn")
	}
	eff := h.all(func() { require.False(t, h.turnEnd("hook_1", c)) })
	wakes := prompts(eff, c)
	require.Len(t, wakes, 1, "the stall goes to the held child")
	require.False(t, wakes[0].NoReply, "and wakes it")
}

// A task given a new session (a rerun elsewhere, on another clock) forgets what it saw of the
// old one: an answer of the new session ends it.
func TestANewSessionForgetsTheOldOnesMessages(t *testing.T) {
	h := newFB(t, config.Config{})
	id := h.launch()
	tk := h.m.task(id)
	h.oc("message.updated", fmt.Sprintf(`{"info":{"id":"msg_late","sessionID":%q,"role":"user","time":{"created":%d}}}`, tk.SessionID, h.now+3_600_000))
	require.NotZero(t, tk.userAfter)
	h.m.bindSession(tk, "ses_again")
	require.Zero(t, tk.userAfter)
	require.NotContains(t, h.m.headless.answers, "ses_again", "answers are kept by session: the new one has none")
}

// Two subagents of one child, held in turn: the task waiting for its slot back after the first
// is held again by the second, and neither goes on before the second's task has reported.
func TestASecondHeldSubagentKeepsTheTaskHeld(t *testing.T) {
	h := newFB(t, config.Config{MaxConcurrentStarts: 1})
	lead, c := h.busyLead()
	h.subagent(c, "ses_s1")
	h.subagent(c, "ses_s2")
	n1 := h.launchFrom("ses_s1", "N1")
	require.False(t, h.turnEnd("hook_1", "ses_s1"))
	q := h.launchFrom("ses_p", "Q")
	h.answer(h.m.task(n1).SessionID, "", "result N1")
	require.False(t, h.m.task(q).Queued, "Q took the slot")
	h.userMessage("ses_s1", h.now)
	require.NotNil(t, h.m.task(lead).Waiting, "the lead waits for its slot back")
	n2 := h.launchFrom("ses_s2", "N2")
	require.False(t, h.turnEnd("hook_2", "ses_s2"))
	require.Nil(t, h.m.task(lead).Waiting, "held again")
	eff := h.all(func() { h.answer(h.m.task(q).SessionID, "", "result Q") })
	require.False(t, h.m.task(n2).Queued, "Q's slot went to N2")
	require.False(t, replied(eff, "hook_2"))
	require.False(t, replied(eff, "hook_1"))
	h.answer(h.m.task(n2).SessionID, "", "result N2")
	eff = h.userMessage("ses_s2", h.now)
	require.True(t, replied(eff, "hook_1"))
	require.True(t, replied(eff, "hook_2"))
}

// A cancel gives a held session nothing to answer: its only task cancelled (from the dashboard),
// it goes on at once,
// and the ⊘ line waits for its idle instead of costing it a model turn.
func TestAHeldChildWhoseTaskWasCancelledGoesOnWithoutATurn(t *testing.T) {
	h := newFB(t, config.Config{})
	_, c := h.busyLead()
	n := h.launchFrom(c, "N")
	require.False(t, h.turnEnd("hook_1", c))
	hd := map[string]string{"host": "127.0.0.1:5165", "origin": "http://127.0.0.1:5165", "authorization": "Bearer tok"}
	h.now += 10
	r, eff := h.m.ServeHTTPEffects(httpapi.Request{Method: "POST", Path: "/v1/tasks/" + n + "/cancel", Port: 5165, Headers: hd}, config.APIConfig{Token: "tok"}, h.now)
	require.Equal(t, 200, r.Status, r.Body)
	require.True(t, replied(eff, "hook_1"))
	for _, e := range prompts(eff, c) {
		require.True(t, e.NoReply, "no model turn for a cancel")
	}
}
