package core

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/stretchr/testify/require"
)

// The remembered models stay bounded however many sessions talk; the newest are kept, and a
// session that changes model often does not grow the queue past its bound.
func TestSessionModelsAreBounded(t *testing.T) {
	var s sessionModels
	for i := 0; i < 3*maxSessionModels; i++ {
		s.set(fmt.Sprintf("ses_%d", i), "p/m")
	}
	require.Equal(t, maxSessionModels, s.len())
	require.Empty(t, s.get("ses_0"), "the oldest is forgotten")
	require.Equal(t, "p/m", s.get(fmt.Sprintf("ses_%d", 3*maxSessionModels-1)))
	for i := 0; i < 10*maxSessionModels; i++ {
		s.set("ses_busy", fmt.Sprintf("p/m%d", i%2))
	}
	require.LessOrEqual(t, len(s.fifo), 2*maxSessionModels+1)
	require.Equal(t, maxSessionModels, s.len())
	s.forget("ses_busy")
	require.Empty(t, s.get("ses_busy"))
}

// An effect whose answer never comes is given up at a heartbeat after pendingTimeoutMs: the
// launch that waited on the agent list fails with why, and the pending map is empty again.
func TestUnansweredEffectIsGivenUp(t *testing.T) {
	m := NewMachine(config.Config{})
	out := m.Step(1, Event{Type: EventToolCall, CallID: "c1", Tool: ToolTask, SessionID: "ses_p",
		Args: json.RawMessage(`{"description":"d","prompt":"p","agent":"general"}`)})
	require.Len(t, ofKind(out, EffectAgentsList), 1)
	require.Len(t, m.pending, 1)
	out = m.Step(2, Event{Type: EventTimer, TimerID: HeartbeatTimer})
	require.Empty(t, ofKind(out, EffectToolReply), "not yet")
	out = m.Step(1+pendingTimeoutMs, Event{Type: EventTimer, TimerID: HeartbeatTimer})
	replies := ofKind(out, EffectToolReply)
	require.Len(t, replies, 1)
	require.Contains(t, replies[0].Error, "no answer from the host after")
	require.Empty(t, m.pending)
	require.False(t, m.agentsFetching, "the next launch asks again")
}

// A task's per-call bookkeeping ends with it.
func TestFinishedTaskDropsItsCallMaps(t *testing.T) {
	h := newFB(t, chainAB)
	id := h.launch()
	h.oc("message.part.updated", fmt.Sprintf(`{"part":{"id":"prt_t","sessionID":%q,"messageID":"msg_x","type":"tool","callID":"call_1","tool":"read","state":{"status":"running"}}}`, id))
	require.NotEmpty(t, h.m.task(id).seenCalls)
	h.answer(id, "", "done")
	r := h.m.task(id)
	require.Nil(t, r.seenCalls)
	require.Nil(t, r.toolsRunning)
}
