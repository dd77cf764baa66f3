package core

import (
	"encoding/json"
	"fmt"
	"strings"
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

// After a restart, a lead whose messages tell of its failure does not cancel a task of its own
// whose messages are still being read: that one may have finished while OpenCode was down, and
// its result is kept.
func TestARestoredFailureWaitsForItsOwnTasksReconcile(t *testing.T) {
	first := newFB(t, config.Config{})
	lead, c := first.busyLead()
	n := first.launchFrom(c, "N")
	nSession := first.m.task(n).SessionID
	var log strings.Builder
	for _, id := range []string{lead, n} {
		log.WriteString(HistoryLine(first.m.task(id).Task))
	}

	h := newFB(t, config.Config{})
	h.now = first.now + 1000
	_, eff := h.m.Restore(h.now, log.String())
	st := ofKind(eff, EffectStatus)
	require.Len(t, st, 1)
	eff = h.step(Event{Type: EventEffectDone, EffectID: st[0].ID, OK: true, Result: json.RawMessage(`{}`)})
	reads := map[string]Effect{}
	for _, e := range ofKind(eff, EffectMessages) {
		reads[e.SessionID] = e
	}
	require.Len(t, reads, 2)
	msg := func(body string) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`[{"info":{"id":"m1","role":"assistant","time":{"created":%d,"completed":%d}%s},"parts":[{"type":"text","text":"result N"}]}]`, h.now-500, h.now-400, body))
	}
	h.step(Event{Type: EventEffectDone, EffectID: reads[c].ID, OK: true, Result: msg(`,"error":` + badRequest)})
	require.Equal(t, task.StatusError, h.status(lead))
	require.Equal(t, task.StatusRunning, h.status(n), "its end is still being read")
	h.step(Event{Type: EventEffectDone, EffectID: reads[nSession].ID, OK: true, Result: msg(`,"finish":"stop"`)})
	require.Equal(t, task.StatusCompleted, h.status(n))
	require.Equal(t, "result N", h.m.task(n).Result)
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

// A restored task whose status read failed, to be asked again, is not cancelled by its parent
// task's failure meanwhile (here a timeout): the read to come says what it did.
func TestARestoredTaskAwaitingItsStatusIsNotCancelled(t *testing.T) {
	first := newFB(t, config.Config{})
	lead, c := first.busyLead()
	n := first.launchFrom(c, "N")
	first.m.task(lead).TimeoutMs = 60_000
	var log strings.Builder
	for _, id := range []string{lead, n} {
		log.WriteString(HistoryLine(first.m.task(id).Task))
	}
	for _, failed := range []bool{false, true} {
		h := newFB(t, config.Config{})
		h.now = first.now + 120_000 // past the lead's limit
		_, eff := h.m.Restore(h.now, log.String())
		st := ofKind(eff, EffectStatus)
		require.Len(t, st, 1)
		if failed {
			h.step(Event{Type: EventEffectDone, EffectID: st[0].ID, Error: "connection refused"})
		}
		h.fireDeadline(lead)
		require.Equal(t, task.StatusError, h.status(lead))
		require.Equal(t, task.StatusRunning, h.status(n), "failed read: %v", failed)
	}
}
