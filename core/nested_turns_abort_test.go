package core

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

// A hold ends with the task: a held child whose task is cancelled (or timed out) is answered
// once its abort is done, or at its idle if that comes first. Answered before, OpenCode's loop
// would start a model call for a message waiting in it (a notice of its own tasks), which the
// abort would cut a moment later. So is a subagent of it, held too.
func TestACancelledHeldChildIsAnsweredOnceAborted(t *testing.T) {
	for _, end := range []string{"abort done", "abort failed", "idle first", "timed out"} {
		t.Run(end, func(t *testing.T) {
			h := newFB(t, config.Config{})
			lead, c := h.busyLead()
			h.launchFrom(c, "N")
			h.subagent(c, "ses_sub")
			h.launchFrom("ses_sub", "M")
			require.False(t, h.turnEnd("hook_c", c))
			require.False(t, h.turnEnd("hook_s", "ses_sub"))

			want := task.StatusCancelled
			if end == "timed out" {
				h.m.task(lead).TimeoutMs, want = 1, task.StatusError
				h.fireDeadline(lead)
			} else {
				h.call(ToolCancel, fmt.Sprintf(`{"task_id":%q}`, lead))
			}
			var abort *Effect
			for i := range h.effects {
				if e := h.effects[i]; e.Kind == EffectAbort && e.SessionID == c {
					abort = &h.effects[i]
				}
			}
			require.NotNil(t, abort, "the child is aborted")
			require.Equal(t, want, h.status(lead))
			require.True(t, h.m.turnHeld(c), "not answered before the abort is done")
			require.True(t, h.m.turnHeld("ses_sub"))
			h.wait(1000)
			require.True(t, h.m.turnHeld(c), "steps meanwhile answer nothing")

			var done []Effect
			switch end {
			case "abort done", "timed out":
				done = h.step(Event{Type: EventEffectDone, EffectID: abort.ID, OK: true})
			case "abort failed":
				done = h.step(Event{Type: EventEffectDone, EffectID: abort.ID, Error: "session not found"})
			case "idle first":
				done = h.oc("session.status", fmt.Sprintf(`{"sessionID":%q,"status":{"type":"idle"}}`, c))
				require.True(t, replied(done, "hook_c"))
				done = h.step(Event{Type: EventEffectDone, EffectID: abort.ID, OK: true})
			}
			require.False(t, h.m.turnHeld(c))
			require.False(t, h.m.turnHeld("ses_sub"))
			if end != "idle first" {
				require.True(t, replied(done, "hook_c"))
			}
			require.True(t, replied(done, "hook_s"))
		})
	}
}

// The case the wait is for: a failure's notice woke the held child, OpenCode took it, and its
// message is not yet seen when the lead is cancelled. Answered at once, the child's loop would
// start a model call for that message.
func TestACancelWithAWakeOnItsWayWaitsForTheAbort(t *testing.T) {
	h := newFB(t, config.Config{})
	lead, c := h.busyLead()
	n1 := h.launchFrom(c, "N1")
	h.launchFrom(c, "N2")
	require.False(t, h.turnEnd("hook_1", c))
	eff := h.all(func() { h.answer(h.m.task(n1).SessionID, `{"name":"APIError","data":{"message":"boom"}}`, "") })
	require.Len(t, prompts(eff, c), 1, "the failure wakes the child; OpenCode took it")
	require.True(t, h.m.turnHeld(c), "its message not yet seen")

	h.call(ToolCancel, fmt.Sprintf(`{"task_id":%q}`, lead))
	require.True(t, h.m.turnHeld(c), "not answered before the abort is done")
	for _, e := range h.effects {
		if e.Kind == EffectAbort && e.SessionID == c {
			eff = h.step(Event{Type: EventEffectDone, EffectID: e.ID, OK: true})
		}
	}
	require.True(t, replied(eff, "hook_1"))
}

// A held child whose hold waits only for a wake on its way (nothing of its own left at work) keeps
// its task's slot, and the attempt timer still runs: on the last model, the timeout ends the task
// and the hold waits for the abort as a cancel's does.
func TestAnAttemptTimeoutWithAWakeOnItsWayWaitsForTheAbort(t *testing.T) {
	cfg := config.Config{Agents: map[string]config.AgentModels{"general": {Models: []string{"mock/mock-a"}}}}
	cfg.Fallback.AttemptTimeoutMs = 60_000
	h := newFB(t, cfg)
	lead, c := h.busyLead()
	n := h.launchFrom(c, "N")
	h.holdPromptsTo = c
	h.answer(h.m.task(n).SessionID, "", "result N")
	require.False(t, h.turnEnd("hook_1", c), "N's notice is on its way")
	require.Len(t, h.heldPrompts, 1)
	require.Equal(t, yieldNone, h.m.task(lead).yield, "nothing of its own at work: it keeps its slot")

	h.now += 61_000
	eff := h.step(Event{Type: EventTimer, TimerID: attemptTimerPrefix + lead})
	require.Equal(t, "AttemptTimeout", h.m.task(lead).Error.Name)
	abort := ofKind(eff, EffectAbort)
	require.Len(t, abort, 1)
	require.True(t, h.m.turnHeld(c), "not answered before the abort is done")
	eff = h.step(Event{Type: EventEffectDone, EffectID: abort[0].ID, OK: true})
	require.True(t, replied(eff, "hook_1"))
}
