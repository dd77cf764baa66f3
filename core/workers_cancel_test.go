package core

import (
	"encoding/json"
	"testing"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// A launch that waits for its worker's health check has no task yet; asyncagents_cancel(all)
// counts it among those still starting, and when the health answers, the task is made cancelled
// and never started on the worker.
func TestCancelAllReachesALaunchWaitingOnItsWorkersHealth(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	h.run(Event{Type: EventStart})
	// w1's stream is not known up: the launch asks its health, and waits (step answers nothing).
	eff := h.step(Event{Type: EventToolCall, CallID: "call_a", Tool: ToolTask, SessionID: "ses_p", MessageID: "msg_p",
		Args: json.RawMessage(`{"description":"a","prompt":"work","agent":"general","worker":"w1"}`)})
	health := ofKind(eff, EffectWorkerHealth)
	require.Len(t, health, 1)
	require.Empty(t, ofKind(eff, EffectToolReply), "the launch waits for the health check")
	require.Len(t, h.m.startingLaunches(), 1)

	reply := h.call(ToolCancel, `{"all":true}`)
	require.Contains(t, reply.Output, cancelStartingOne)

	eff = h.run(Event{Type: EventEffectDone, EffectID: health[0].ID, OK: true, Result: json.RawMessage(`{"healthy":true,"version":"1.18.33"}`)})
	replies := ofKind(eff, EffectToolReply)
	require.Len(t, replies, 1)
	tk := h.taskOf(replies[0])
	require.Equal(t, task.StatusCancelled, tk.Status)
	require.Equal(t, "w1", tk.Worker)
	require.Empty(t, ofKind(h.effects, EffectSessionCreate), "no child session on the worker")
	require.Empty(t, h.m.startingLaunches())
}
