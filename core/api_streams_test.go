package core

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/internal/tasktest"
)

// A host that counts the status API's event streams gets task frames only while one is open;
// one that never says gets them all. A history line is written either way.
func TestTaskFramesOnlyWhileAStreamIsOpen(t *testing.T) {
	m := NewMachine(config.Config{MaxConcurrentStarts: 10})
	agents := json.RawMessage(`[{"name":"general","mode":"subagent"}]`)
	eff := m.Step(1, Event{Type: EventToolCall, CallID: "c1", Tool: ToolTask, SessionID: "ses_p", MessageID: "m", Args: json.RawMessage(`{"description":"d","prompt":"p","agent":"general"}`)})
	for _, e := range eff {
		if e.Kind == EffectAgentsList {
			eff = m.Step(1, Event{Type: EventEffectDone, EffectID: e.ID, OK: true, Result: agents})
		}
	}
	create := effectOf(t, eff, EffectSessionCreate)
	eff = m.Step(1, Event{Type: EventEffectDone, EffectID: create.ID, OK: true, Result: json.RawMessage(`{"id":"ses_c"}`)})
	m.Step(1, Event{Type: EventEffectDone, EffectID: effectOf(t, eff, EffectPromptAsync).ID, OK: true})

	k := 0
	progress := func() (frames, lines int) {
		k++
		part := fmt.Sprintf(`{"part":{"sessionID":"ses_c","type":"tool","callID":"k%d","tool":"read"}}`, k)
		// The line comes when the progress timer fires (history_progress.go), the frame at once.
		for _, e := range m.Step(int64(1+k), Event{Type: EventOpenCode, Event: &OpenCodeEvent{Type: "message.part.updated", Properties: json.RawMessage(part)}}) {
			if e.Kind == EffectSSEBroadcast {
				frames++
			}
		}
		lines = len(ofKind(m.Step(int64(1+k), Event{Type: EventTimer, TimerID: ProgressTimer}), EffectHistoryAppend))
		return frames, lines
	}
	heartbeats := func() int {
		n := 0
		for _, e := range m.Step(100, Event{Type: EventTimer, TimerID: HeartbeatTimer}) {
			if e.Kind == EffectSSEBroadcast {
				n++
			}
		}
		return n
	}
	frames, lines := progress()
	require.Equal(t, [2]int{1, 1}, [2]int{frames, lines}, "a host that never counted its streams")
	require.Equal(t, 1, heartbeats())

	m.Step(10, Event{Type: EventAPIStreams, Open: 0})
	frames, lines = progress()
	require.Equal(t, [2]int{0, 1}, [2]int{frames, lines}, "no stream open: the line, no frame")
	require.Equal(t, 0, heartbeats())

	// A stream the API accepts counts at once; the host says so only when one closes.
	require.Equal(t, 200, m.ServeHTTP(apiGet("/v1/events", ""), tasktest.APIConfig, 20).Status)
	frames, _ = progress()
	require.Equal(t, 1, frames, "a stream just opened")
	require.Equal(t, 1, heartbeats())

	m.Step(30, Event{Type: EventAPIStreams, Open: 1}) // another closed, this one still open
	frames, _ = progress()
	require.Equal(t, 1, frames)
	m.Step(40, Event{Type: EventAPIStreams, Open: 0})
	frames, _ = progress()
	require.Equal(t, 0, frames)

	// A stream refused (past the limit) is not one.
	full := apiGet("/v1/events", "")
	full.Subscribers = 1_000
	require.Equal(t, 503, m.ServeHTTP(full, tasktest.APIConfig, 50).Status)
	frames, _ = progress()
	require.Equal(t, 0, frames)
}

func effectOf(t *testing.T, effects []Effect, kind string) Effect {
	t.Helper()
	for _, e := range effects {
		if e.Kind == kind {
			return e
		}
	}
	t.Fatalf("no %s effect in %+v", kind, effects)
	return Effect{}
}
