package core

import (
	"encoding/json"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// idleTick fires w1's poll timer, answers its status read with nothing busy and the read of the
// messages that follows with msgs; returns the effects.
func (h *wkHarness) idleTick(msgs string) []Effect {
	eff := h.tick()
	out := h.run(Event{Type: EventEffectDone, EffectID: ofKind(eff, EffectStatus)[0].ID, OK: true, Result: json.RawMessage(`{}`)})
	for _, rd := range ofKind(out, EffectMessages) {
		out = append(out, h.run(Event{Type: EventEffectDone, EffectID: rd.ID, OK: true, Result: json.RawMessage(msgs)})...)
	}
	return append(eff, out...)
}

// A polled child whose prompt failed before any answer (its session.error on no stream) sits
// idle with only its prompt: 30 s after the prompt the task fails, naming the worker, with one
// notice. Before that it is a slow start and waits.
func TestAPolledTaskWithNoAnswerFails(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	h.idleParent()
	onlyPrompt := `[{"info":{"id":"msg_u","role":"user","time":{"created":1}},"parts":[]}]`
	for range 20 {
		h.idleTick(onlyPrompt)
	}
	require.Equal(t, task.StatusRunning, tk.Status, "20 s idle after its prompt: still a slow start")
	var eff []Effect
	for i := 0; i < 15 && !tk.Status.Terminal(); i++ {
		eff = h.idleTick(onlyPrompt)
	}
	require.Equal(t, task.StatusError, tk.Status)
	require.Equal(t, "NoAnswer", tk.Error.Name)
	require.Contains(t, tk.Error.Message, "worker w1")
	require.Len(t, parentNotices(eff), 1)
}

// A slow polled worker's reads do not pile up: while a tick's status read is out the next
// tick sends none, and while a read of a task's messages is out no other is sent.
func TestAPolledWorkersReadsDoNotPileUp(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	st := ofKind(h.tick(), EffectStatus)
	require.Len(t, st, 1)
	require.Empty(t, ofKind(h.tick(), EffectStatus), "the first read is still out")
	eff := h.run(Event{Type: EventEffectDone, EffectID: st[0].ID, OK: true, Result: json.RawMessage(`{}`)})
	require.Len(t, ofKind(eff, EffectMessages), 1)
	eff = h.tick()
	eff = h.run(Event{Type: EventEffectDone, EffectID: ofKind(eff, EffectStatus)[0].ID, OK: true, Result: json.RawMessage(`{}`)})
	require.Empty(t, ofKind(eff, EffectMessages), "the read of %s's messages is still out", tk.ID)
}

// An answer the user gives through asyncagents is recorded as given: no permission.replied
// comes from a polled worker, and the next read of its requests does not call it gone.
func TestAPolledWorkersAnsweredPermissionIsRecorded(t *testing.T) {
	h := newWK(t, polledW1(func(c *config.Config) { c.Permission.TimeoutMs = 5_000 }))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	h.idleParent()
	eff := h.tick()
	h.listed(ofKind(eff, EffectPermissionList)[0], pendingOn(tk.SessionID, "per_1"))
	require.NotNil(t, tk.pendingPermission("per_1"))
	h.now += 5_000
	eff = h.run(Event{Type: EventTimer, TimerID: permissionTimerPrefix + tk.ID + ":per_1"})
	reply := ofKind(eff, EffectPermissionReply)
	require.Len(t, reply, 1)
	h.run(Event{Type: EventEffectDone, EffectID: reply[0].ID, OK: true})
	require.Nil(t, tk.pendingPermission("per_1"))
	h.listed(ofKind(h.tick(), EffectPermissionList)[0], `[]`)
	require.Equal(t, task.PermissionReject, tk.permission("per_1").Reply, "recorded as answered, not gone")
}

// A polled worker's agents are asked again at each heartbeat (no dispose event tells of a
// change there); a followed one's are not.
func TestAPolledWorkersAgentsAreAskedAgain(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	eff := h.run(Event{Type: EventTimer, TimerID: HeartbeatTimer})
	asks := ofKind(eff, EffectAgentsList)
	require.Len(t, asks, 1)
	require.Equal(t, "w1", asks[0].Worker)
}

// A polled task with a chain of models, busy at each tick but with no new part between its
// progress reads, is not abandoned for the next model at attemptTimeoutMs.
func TestAPolledBusyTaskKeepsItsAttempt(t *testing.T) {
	h := newWK(t, polledW1(func(c *config.Config) {
		c.Agents = chainAB.Agents
		c.Fallback.AttemptTimeoutMs = 3_000
	}))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	for range 8 {
		h.busyTick(tk, `[]`)
		eff := h.run(Event{Type: EventTimer, TimerID: attemptTimerPrefix + tk.ID})
		require.Empty(t, ofKind(eff, EffectAbort), "busy: its attempt goes on")
	}
	require.Equal(t, "mock/mock-a", tk.Model)
}
