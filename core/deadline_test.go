package core

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// deadlineTimers are the timer effects of a task's wall-clock limit among effects.
func deadlineTimers(effects []Effect, kind, taskID string) []Effect {
	var out []Effect
	for _, e := range ofKind(effects, kind) {
		if e.TimerID == deadlineTimerPrefix+taskID {
			out = append(out, e)
		}
	}
	return out
}

// fire fires a task's deadline timer at the harness's time.
func (h *fbHarness) fireDeadline(taskID string) []Effect {
	return h.step(Event{Type: EventTimer, TimerID: deadlineTimerPrefix + taskID})
}

// The launch arms a timer for the whole timeout, and its firing ends the task at once, without
// waiting for a poll; a timer that fires early is armed again for what is left.
func TestTimeoutHasItsOwnTimer(t *testing.T) {
	h := newFB(t, config.Config{PollIntervalMs: 60_000})
	eff := h.step(Event{Type: EventToolCall, CallID: "call_t", Tool: ToolTask, SessionID: "ses_p", MessageID: "msg_p",
		Args: json.RawMessage(`{"description":"survey","prompt":"look around","agent":"general","timeout":1}`)})
	id := fmt.Sprintf("ses_c%d", h.nextSes)
	tk := h.m.task(id)
	timers := deadlineTimers(eff, EffectTimerSet, tk.ID)
	require.Len(t, timers, 1)
	require.Equal(t, tk.StartedAt+1000-h.now+10, timers[0].DelayMs+10, "the timer is set for the start plus the timeout")

	h.now = tk.StartedAt + 500 - 10
	eff = h.fireDeadline(tk.ID)
	require.Empty(t, ofKind(eff, EffectAbort), "early: not yet")
	again := deadlineTimers(eff, EffectTimerSet, tk.ID)
	require.Len(t, again, 1)
	require.Equal(t, int64(500), again[0].DelayMs)

	h.now = tk.StartedAt + 1000 - 10
	eff = h.fireDeadline(tk.ID)
	require.Len(t, ofKind(eff, EffectAbort), 1)
	require.Equal(t, task.StatusError, tk.Status)
	require.Equal(t, tk.StartedAt+1000, tk.CompletedAt, "ended at its deadline, not at a poll")
	require.Empty(t, ofKind(h.fireDeadline(tk.ID), EffectAbort), "a late firing finds the task ended")
}

// The time a task waits for the user's permission does not count against its timeout: the
// timer stops while a request is unanswered, and the answer moves the deadline by the wait, so
// a child allowed after its first deadline is not aborted.
func TestTimeoutDoesNotRunWhileWaitingForPermission(t *testing.T) {
	h := newFB(t, config.Config{})
	h.step(Event{Type: EventToolCall, CallID: "call_t", Tool: ToolTask, SessionID: "ses_p", MessageID: "msg_p",
		Args: json.RawMessage(`{"description":"asks","prompt":"p","agent":"general","timeout":60}`)})
	id := fmt.Sprintf("ses_c%d", h.nextSes)
	tk := h.m.task(id)
	h.now = tk.StartedAt + 10_000
	eff := h.asks(tk.SessionID, "per_1")
	require.Len(t, deadlineTimers(eff, EffectTimerClear, tk.ID), 1, "no timer while the user is asked")
	asked := h.m.task(id).Permissions[0].At

	require.Empty(t, ofKind(h.wait(100_000), EffectAbort), "the wait is past the first deadline")
	eff = h.oc("permission.replied", fmt.Sprintf(`{"sessionID":%q,"requestID":"per_1","reply":"once"}`, tk.SessionID))
	replied := h.m.task(id).Permissions[0].RepliedAt
	timers := deadlineTimers(eff, EffectTimerSet, tk.ID)
	require.Len(t, timers, 1)
	want := tk.StartedAt + 60_000 + (replied - asked)
	require.Equal(t, want-h.now, timers[0].DelayMs, "the deadline moved by the wait")

	require.Empty(t, ofKind(h.poll(), EffectAbort), "the child just allowed runs on")
	require.Equal(t, task.StatusRunning, tk.Status)
	h.now = want - 10
	require.Len(t, ofKind(h.fireDeadline(tk.ID), EffectAbort), 1)
	require.Equal(t, want, tk.CompletedAt)
}

// Overlapping requests count once, and a request from before the current run not at all.
func TestPermissionWaitedCountsOverlapsOnce(t *testing.T) {
	r := &run{}
	r.Permissions = []task.PermissionRequest{
		{ID: "a", At: 50, RepliedAt: 150, Reply: "once"},
		{ID: "b", At: 120, RepliedAt: 200, Reply: "once"},
		{ID: "c", At: 300, RepliedAt: 310, Reply: "reject"},
		{ID: "d", At: 400},
	}
	require.Equal(t, int64(100+10+50), permissionWaited(r, 100, 450))
}
