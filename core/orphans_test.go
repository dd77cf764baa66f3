package core

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

// A task that fails takes the tasks its child launched with it, however it fails: left running,
// each one's notice would wake the failed child for a model turn no one reads. They are cancelled
// at once, quietly (the failed task's own notice tells its parent), their children aborted, with a
// reason that names the failure; with cancelOnParentAbort off too, which is about the user's turn.
func TestAFailedTasksOwnTasksAreCancelledWithIt(t *testing.T) {
	noCascade := false
	cases := []struct {
		name string
		cfg  config.Config
		// fail makes the lead fail; it returns where in h.effects the failing step's begin.
		fail func(h *fbHarness, lead, child string) int
		why  string
	}{
		{"its model failed", config.Config{}, func(h *fbHarness, _, c string) int {
			at := len(h.effects)
			h.answer(c, badRequest, "")
			return at
		}, "APIError"},
		{"every model failed", chainAB, func(h *fbHarness, _, c string) int {
			h.answer(c, rateLimited, "")
			h.busy(c)
			at := len(h.effects)
			h.answer(c, rateLimited, "")
			return at
		}, "APIError"},
		{"it timed out", config.Config{}, func(h *fbHarness, lead, _ string) int {
			at := len(h.effects)
			h.m.task(lead).TimeoutMs = 1
			h.fireDeadline(lead)
			return at
		}, "Timeout"},
		{"it timed out, no cascade", config.Config{CancelOnParentAbort: &noCascade}, func(h *fbHarness, lead, _ string) int {
			at := len(h.effects)
			h.m.task(lead).TimeoutMs = 1
			h.fireDeadline(lead)
			return at
		}, "Timeout"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newFB(t, tc.cfg)
			lead, c := h.busyLead()
			n := h.launchFrom(c, "N")
			h.subagent(c, "ses_sub")
			m := h.launchFrom("ses_sub", "M") // through a native subagent of the lead's child
			before := tc.fail(h, lead, c)
			require.Equal(t, task.StatusError, h.status(lead))
			for _, id := range []string{n, m} {
				tk := h.m.task(id)
				require.Equal(t, task.StatusCancelled, tk.Status, id)
				require.Equal(t, fmt.Sprintf(orphanReasonFmt, tc.why), tk.CancelReason)
				aborted := false
				for _, e := range h.effects[before:] {
					aborted = aborted || (e.Kind == EffectAbort && e.SessionID == tk.SessionID)
				}
				require.True(t, aborted, "its child is aborted")
			}
			require.Empty(t, prompts(h.effects[before:], c), "nothing is posted to the failed child")
			require.Empty(t, prompts(h.effects[before:], "ses_sub"))
			require.Len(t, prompts(h.effects[before:], "ses_p"), 1, "the lead's parent hears of the lead's end only")
			require.NotContains(t, prompts(h.effects[before:], "ses_p")[0].Parts[0].Text, "N")
		})
	}
}

// A failure the next model takes over is no end: the task's own tasks go on.
func TestATaskLeftForTheNextModelKeepsItsOwnTasks(t *testing.T) {
	h := newFB(t, chainAB)
	lead, c := h.busyLead()
	n := h.launchFrom(c, "N")
	h.answer(c, rateLimited, "")
	require.Equal(t, task.StatusRunning, h.status(lead))
	require.Equal(t, task.StatusRunning, h.status(n))
}

// A task stopped on purpose with an error (a budget) cancels what it took with it under its own
// reason: the orphans' cancel does not get there first.
func TestABudgetStopStillNamesItsReason(t *testing.T) {
	h := newFB(t, config.Config{Budget: config.BudgetConfig{Tokens: 1000}})
	lead, c := h.busyLead()
	n := h.launchFrom(c, "N")
	h.spent(c, "msg_1", 1500, 0, "tool-calls")
	require.Equal(t, task.StatusError, h.status(lead))
	require.Equal(t, task.StatusCancelled, h.status(n))
	require.Equal(t, "its parent task's budget was exceeded", h.m.task(n).CancelReason)
}

// A launch of the failed task's child that has no task yet (here it waits for its worker's health
// check) becomes one only to be cancelled with the others: no session is made for it.
func TestAFailedTasksWaitingLaunchIsCancelled(t *testing.T) {
	r := newWK(t, twoWorkers(nil))
	r.run(Event{Type: EventStart})
	lead, c := r.busyLead()
	eff := r.step(Event{Type: EventToolCall, CallID: "call_w", Tool: ToolTask, SessionID: c, MessageID: "msg_c",
		Args: json.RawMessage(`{"description":"on w1","prompt":"p","agent":"general","worker":"w1"}`)})
	health := ofKind(eff, EffectWorkerHealth)
	require.Len(t, health, 1)
	r.answer(c, badRequest, "")
	require.Equal(t, task.StatusError, r.status(lead))
	eff = r.run(Event{Type: EventEffectDone, EffectID: health[0].ID, OK: true, Result: json.RawMessage(`{"healthy":true,"version":"1.18.33"}`)})
	for _, e := range ofKind(eff, EffectSessionCreate) {
		require.NotEqual(t, "w1", e.Worker, "no child is made for it")
	}
	var found bool
	for _, tk := range r.m.Tasks() {
		if tk.Description == "on w1" {
			found = true
			require.Equal(t, task.StatusCancelled, tk.Status)
			require.Equal(t, fmt.Sprintf(orphanReasonFmt, "APIError"), tk.CancelReason)
		}
	}
	require.True(t, found)
}

// The tasks a failure cancels end before the queue is looked at: a queued task of the failed
// lead's child never gets a session in the slot the lead freed, and the user's own queued task
// gets one.
func TestAFailedTasksQueuedTaskNeverStarts(t *testing.T) {
	h := newFB(t, config.Config{MaxConcurrentStarts: 2})
	lead, c := h.busyLead()
	h.launchFrom(c, "N")
	q := h.launchFrom(c, "Q")
	mine := h.launchFrom("ses_p", "mine")
	require.True(t, h.m.task(q).Queued)
	eff := h.all(func() { h.answer(c, badRequest, "") })
	require.Equal(t, task.StatusError, h.status(lead))
	require.Equal(t, task.StatusCancelled, h.status(q))
	require.Empty(t, h.m.task(q).SessionID, "cancelled while queued")
	require.Len(t, ofKind(eff, EffectSessionCreate), 1, "one child made, for the user's own task")
	require.NotEmpty(t, h.m.task(mine).SessionID)
}

// A notice that would wake a held child whose task was just cancelled, coming while the child's
// abort is on its way (the one before it was still being sent), does not wake it: the abort
// answers its held turn (nested_turns.go holdForAbort), and a wake now would start a model call
// that the abort cuts.
func TestANoticeToAnAbortingHeldChildDoesNotWakeIt(t *testing.T) {
	h := newFB(t, config.Config{})
	lead, c := h.busyLead()
	n1 := h.launchFrom(c, "N1")
	n2 := h.launchFrom(c, "N2")
	h.launchFrom(c, "N3")
	require.False(t, h.turnEnd("hook_c", c))
	h.holdPromptsTo = c
	h.answer(h.m.task(n1).SessionID, badRequest, "")
	require.Len(t, h.heldPrompts, 1, "N1's failure wakes the child; its message is on its way")
	h.answer(h.m.task(n2).SessionID, badRequest, "")
	require.Len(t, h.heldPrompts, 1, "N2's waits for it")
	h.call(ToolCancel, fmt.Sprintf(`{"task_id":%q}`, lead))
	h.holdPromptsTo = ""
	eff := h.step(Event{Type: EventEffectDone, EffectID: h.heldPrompts[0].ID, OK: true})
	for _, p := range prompts(eff, c) {
		require.True(t, p.NoReply, "no wake for a child being aborted")
	}
}

// A native subagent whose turn is held for its own task outlives the end of the task above it
// (its lead answered): that task's notice still wakes it, or its turn would never end.
func TestAHeldSubagentBelowAnEndedTaskIsStillWoken(t *testing.T) {
	h := newFB(t, config.Config{})
	lead, c := h.busyLead()
	h.subagent(c, "ses_sub")
	n := h.launchFrom("ses_sub", "N")
	require.False(t, h.turnEnd("hook_s", "ses_sub"), "held for N")
	h.answer(c, "", "the lead's answer")
	require.Equal(t, task.StatusCompleted, h.status(lead))
	require.True(t, h.m.turnHeld("ses_sub"))
	eff := h.all(func() { h.answer(h.m.task(n).SessionID, "", "result N") })
	wakes := prompts(eff, "ses_sub")
	require.Len(t, wakes, 1)
	require.False(t, wakes[0].NoReply, "the held subagent is woken")
}
