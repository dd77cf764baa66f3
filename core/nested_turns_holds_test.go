package core

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/httpapi"
)

// cancelFromDashboard cancels id through the HTTP API, as the dashboard does, and returns the
// effects of that request.
func (h *fbHarness) cancelFromDashboard(id string) []Effect {
	hd := map[string]string{"host": "127.0.0.1:5165", "origin": "http://127.0.0.1:5165", "authorization": "Bearer tok"}
	h.now += 10
	r, eff := h.m.ServeHTTPEffects(httpapi.Request{Method: "POST", Path: "/v1/tasks/" + id + "/cancel", Port: 5165, Headers: hd}, config.APIConfig{Token: "tok"}, h.now)
	require.Equal(h.t, 200, r.Status, r.Body)
	h.effects = append(h.effects, eff...)
	return eff
}

// A cancel gives a session held for its own tasks nothing to answer, under either wake setting:
// whether the user cancelled its only task from the dashboard while it was held, or the session
// cancelled it itself before its answer ended (its cancel call answered it), its turn ends at
// once and the ⊘ line costs it no model turn. Under "each" the user's own session is still woken
// by a cancel's notice: a turn per notice is what it asked for.
func TestACancelWakesNoHeldSessionUnderEitherWake(t *testing.T) {
	for _, wake := range []string{config.WakeBatch, config.WakeEach} {
		for _, by := range []string{"dashboard", "itself"} {
			t.Run(wake+"/"+by, func(t *testing.T) {
				cfg := config.Config{}
				cfg.Notify.Wake = wake
				h := newFB(t, cfg)
				_, c := h.busyLead()
				n := h.launchFrom(c, "N")
				var eff []Effect
				if by == "dashboard" {
					require.False(t, h.turnEnd("hook_1", c))
					eff = h.cancelFromDashboard(n)
					require.True(t, replied(eff, "hook_1"), "nothing of its own is left to answer")
				} else {
					eff = h.all(func() {
						h.step(Event{Type: EventToolCall, CallID: "call_cancel", Tool: ToolCancel, SessionID: c, Args: json.RawMessage(fmt.Sprintf(`{"task_id":%q}`, n))})
						require.True(t, h.turnEnd("hook_1", c), "its cancel call answered it: nothing is owed")
					})
				}
				for _, e := range prompts(eff, c) {
					require.True(t, e.NoReply, "no model turn for a cancel")
				}
			})
		}
	}
	t.Run("each/the user's session", func(t *testing.T) {
		cfg := config.Config{}
		cfg.Notify.Wake = config.WakeEach
		h := newFB(t, cfg)
		a := h.launchFrom("ses_p", "A")
		h.idleParent()
		wakes := prompts(h.cancelFromDashboard(a), "ses_p")
		require.Len(t, wakes, 1)
		require.False(t, wakes[0].NoReply, "each: every notice wakes the user's session")
	})
}

// A hold waiting for the abort of its task's child is answered by that abort, not another's,
// even once the way from the held session up to its task is forgotten (a subagent's link goes
// with its generation, session_parents.go): answered early, OpenCode's loop would start a model
// call in a session being aborted.
func TestAHoldWaitsForItsOwnTasksAbort(t *testing.T) {
	h := newFB(t, config.Config{})
	a, ca := h.busyLead()
	b := h.launchFrom("ses_p", "B")
	cb := h.m.task(b).SessionID
	h.busy(cb)
	h.subagent(cb, "ses_sb")
	h.launchFrom("ses_sb", "M")
	require.False(t, h.turnEnd("hook_sb", "ses_sb"))
	h.call(ToolCancel, fmt.Sprintf(`{"task_id":%q}`, a))
	h.call(ToolCancel, fmt.Sprintf(`{"task_id":%q}`, b))
	h.m.sessionsBelow.forget("ses_sb")
	aborts := map[string]Effect{}
	for _, e := range ofKind(h.effects, EffectAbort) {
		aborts[e.SessionID] = e
	}
	require.Contains(t, aborts, ca)
	require.Contains(t, aborts, cb)

	eff := h.step(Event{Type: EventEffectDone, EffectID: aborts[ca].ID, OK: true})
	require.False(t, replied(eff, "hook_sb"), "A's abort is not B's")
	eff = h.step(Event{Type: EventEffectDone, EffectID: aborts[cb].ID, OK: true})
	require.True(t, replied(eff, "hook_sb"))
}

// slotsInUse counts the slots the tasks hold under maxConcurrentStarts.
func (h *fbHarness) slotsInUse() int {
	return h.m.limits().InUse(records(h.m.slotTasks())).Total
}

// A held subagent let go at once (the user aborted it, or it was deleted) leaves its task to queue
// for its slot back, not take it past the limit while the task it gave the slot to still runs;
// meanwhile its child's next answer waits with it, and goes on once that task's slot frees. With
// nothing else running, it has the slot at once.
func TestAHoldLetGoAtOnceKeepsTheLimit(t *testing.T) {
	cases := []struct {
		name    string
		cascade bool
		letGo   func(h *fbHarness)
		nRuns   bool // N, the subagent's task, still holds the slot
	}{
		{"aborted, no cascade", false, func(h *fbHarness) { h.abortTurn("ses_s") }, true},
		{"aborted, its task cancelled", true, func(h *fbHarness) { h.abortTurn("ses_s") }, false},
		{"deleted", true, func(h *fbHarness) { h.oc("session.deleted", `{"info":{"id":"ses_s"}}`) }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newFB(t, config.Config{MaxConcurrentStarts: 1, CancelOnParentAbort: config.Bool(tc.cascade)})
			lead, c := h.busyLead()
			h.subagent(c, "ses_s")
			h.busy("ses_s")
			n := h.launchFrom("ses_s", "N")
			require.False(t, h.turnEnd("hook_s", "ses_s"))
			require.False(t, h.m.task(n).Queued, "the lead's slot went to N")

			tc.letGo(h)
			require.False(t, h.m.turnHeld("ses_s"))
			require.LessOrEqual(t, h.slotsInUse(), 1)
			if !tc.nRuns {
				require.Equal(t, yieldNone, h.m.task(lead).yield, "its slot is free: the lead has it")
				require.True(t, h.turnEnd("hook_c", c))
				return
			}
			require.NotNil(t, h.m.task(lead).Waiting, "the lead waits for N's slot")
			require.False(t, h.turnEnd("hook_c", c), "its child's answer waits for the slot")
			eff := h.all(func() { h.answer(h.m.task(n).SessionID, "", "result N") })
			require.True(t, replied(eff, "hook_c"), "N's slot is the lead's")
			require.Equal(t, yieldNone, h.m.task(lead).yield)
			require.Nil(t, h.m.task(lead).Waiting)
		})
	}
}

// A task queued for its slot back after its held subagent was let go (unyield) runs its child
// meanwhile, whose model may fail: the fallback then waits, as any does, for a slot on the next
// model, and gets it when the task that held the slot ends. It is never left queued for good.
func TestAFallbackWhileQueuedForTheSlotBackStartsOnTheNextModel(t *testing.T) {
	cfg := chainAB
	cfg.MaxConcurrentStarts = 1
	h := newFB(t, cfg)
	lead, c := h.busyLead()
	q := h.launchFrom("ses_p", "Q")
	require.True(t, h.m.task(q).Queued)
	h.subagent(c, "ses_s")
	h.busy("ses_s")
	h.launchFrom("ses_s", "N")
	require.False(t, h.turnEnd("hook_s", "ses_s"))
	require.False(t, h.m.task(q).Queued, "the held lead's slot went to Q, the older")

	h.abortTurn("ses_s") // N is cancelled with it; the lead waits for Q's slot
	require.Equal(t, yieldReady, h.m.task(lead).yield)
	h.answer(c, rateLimited, "")
	require.True(t, h.m.task(lead).Queued, "B's slot is Q's: it waits for it")
	require.LessOrEqual(t, h.slotsInUse(), 1)

	eff := h.answer(h.m.task(q).SessionID, "", "result Q")
	next := prompts(eff, c)
	require.Len(t, next, 1, "Q's slot is the lead's, on B")
	require.Equal(t, "mock/mock-b", next[0].Model)
	require.False(t, h.m.task(lead).Queued)
	require.Equal(t, yieldNone, h.m.task(lead).yield)
}

// queuedForSlotBack has a lead hold the only slot, its child's subagent launch N and be held
// (N takes the slot), then the subagent aborted with N left running: the lead waits for N's slot.
func queuedForSlotBack(t *testing.T, cfg config.Config) (h *fbHarness, lead, child string) {
	cfg.MaxConcurrentStarts, cfg.CancelOnParentAbort = 1, config.Bool(false)
	h = newFB(t, cfg)
	lead, child = h.busyLead()
	h.subagent(child, "ses_s")
	h.busy("ses_s")
	h.launchFrom("ses_s", "N")
	require.False(t, h.turnEnd("hook_s", "ses_s"))
	h.abortTurn("ses_s")
	require.Equal(t, yieldReady, h.m.task(lead).yield, "N holds the slot")
	return h, lead, child
}

// A task queued for its slot back after its held subagent was let go at once works on until its
// child's next answer's end, and is watched as any working task: a child silent meanwhile is a
// stall, and a silent attempt.
func TestAChildWorkingWhileQueuedForItsSlotBackIsWatched(t *testing.T) {
	warn := int64(60_000)
	cfg := config.Config{}
	cfg.Stall.WarnAfterMs = &warn
	h, lead, _ := queuedForSlotBack(t, cfg)
	h.wait(2 * warn)
	require.NotZero(t, h.m.task(lead).StalledSince, "its child works, unheld, and said nothing")

	cfg = chainAB
	cfg.Fallback.AttemptTimeoutMs = 60_000
	h, lead, c := queuedForSlotBack(t, cfg)
	h.now += 600_000
	eff := h.step(Event{Type: EventTimer, TimerID: attemptTimerPrefix + lead})
	var aborted []string
	for _, e := range ofKind(eff, EffectAbort) {
		aborted = append(aborted, e.SessionID)
	}
	require.Contains(t, aborted, c, "a silent attempt: its child leaves A")
}
