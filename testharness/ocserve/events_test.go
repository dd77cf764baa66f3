package ocserve

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Pins the /event shapes the plugin's event hook relies on (1.18.33), with
// one turn that calls bash and the task tool (a child session).
func TestEventShapes(t *testing.T) {
	ctx := testCtx(t, 90*time.Second)
	m := mockmodel.Start(t, func(r mockmodel.Request) mockmodel.Reply {
		last := r.Messages[len(r.Messages)-1]
		switch {
		case last.Role == "tool":
			return mockmodel.Reply{Text: "all done"}
		case r.LastUser == "child task prompt":
			return mockmodel.Reply{Text: "child answer"}
		}
		return mockmodel.Reply{Text: "Working.", ToolCalls: []mockmodel.ToolCall{
			{Name: "bash", Args: map[string]any{"command": "echo hi", "description": "say hi"}},
			{Name: "task", Args: map[string]any{"description": "child", "prompt": "child task prompt", "subagent_type": "general"}},
		}}
	})
	s := Start(t, Options{ModelURL: m.URL()})
	rec := s.Record(t)
	id, err := s.CreateSession(ctx, "events")
	require.NoError(t, err)
	require.NoError(t, s.PromptAsync(ctx, id, "", "use tools"))
	require.NoError(t, s.WaitIdle(ctx, id))
	_, err = rec.Wait(ctx, Is("session.idle", id))
	require.NoError(t, err)

	// session.status and session.idle
	var st struct {
		SessionID string
		Status    SessionStatus
	}
	statuses := rec.Filter(Is("session.status", id))
	require.NotEmpty(t, statuses)
	decode(t, statuses[0], &st)
	assert.Equal(t, SessionStatus{Type: "busy"}, st.Status)
	decode(t, statuses[len(statuses)-1], &st)
	assert.Equal(t, SessionStatus{Type: "idle"}, st.Status)
	idle, _ := rec.Wait(ctx, Is("session.idle", id))
	assert.JSONEq(t, `{"sessionID":"`+id+`"}`, string(idle.Properties))

	// message.updated: the final assistant message carries finish and time.completed.
	var mu struct {
		SessionID string
		Info      MessageInfo
	}
	var final MessageInfo
	for _, e := range rec.Filter(Is("message.updated", id)) {
		decode(t, e, &mu)
		assert.Equal(t, id, mu.SessionID)
		if mu.Info.Role == "assistant" && mu.Info.Finish == "stop" && mu.Info.Time.Completed > 0 {
			final = mu.Info
		}
	}
	require.NotEmpty(t, final.ID, "an assistant message.updated with finish stop and time.completed")
	t.Logf("message.updated (assistant, final): %s", final.Raw)

	// message.part.updated: text parts and tool parts through their states.
	var pu struct {
		SessionID string
		Part      Part
		Time      int64
	}
	toolStates := map[string][]string{}
	var texts []string
	for _, e := range rec.Filter(Is("message.part.updated", id)) {
		decode(t, e, &pu)
		assert.Equal(t, id, pu.Part.SessionID)
		assert.Positive(t, pu.Time)
		switch pu.Part.Type {
		case "text":
			if pu.Part.Text != "" {
				texts = append(texts, pu.Part.Text)
			}
		case "tool":
			toolStates[pu.Part.Tool] = append(toolStates[pu.Part.Tool], pu.Part.State.Status)
			if pu.Part.State.Status == "completed" {
				t.Logf("message.part.updated (%s completed): %s", pu.Part.Tool, e.Properties)
				if pu.Part.Tool == "bash" {
					assert.Equal(t, "hi\n", pu.Part.State.Output)
					assert.Equal(t, "echo hi", pu.Part.State.Input["command"])
				}
				if pu.Part.Tool == "task" {
					assert.Contains(t, pu.Part.State.Output, "child answer")
				}
			}
		}
	}
	assert.Contains(t, texts, "all done")
	for _, tool := range []string{"bash", "task"} {
		require.NotEmpty(t, toolStates[tool], tool)
		assert.Equal(t, "pending", toolStates[tool][0], tool)
		assert.Contains(t, toolStates[tool], "running", tool)
		assert.Equal(t, "completed", toolStates[tool][len(toolStates[tool])-1], tool)
	}

	// The task tool made a child session.
	kids, err := s.Children(ctx, id)
	require.NoError(t, err)
	require.Len(t, kids, 1)
	assert.Equal(t, id, kids[0].ParentID)
	kidMsgs, err := s.Messages(ctx, kids[0].ID)
	require.NoError(t, err)
	require.NotEmpty(t, kidMsgs)
	assert.Equal(t, "child answer", kidMsgs[len(kidMsgs)-1].Text())
	created, err := rec.Wait(ctx, Is("session.created", kids[0].ID))
	require.NoError(t, err)
	assert.True(t, strings.Contains(string(created.Properties), `"parentID":"`+id+`"`), string(created.Properties))
}

func decode(t *testing.T, e Event, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(e.Properties, v), "%s %s", e.Type, e.Properties)
}
