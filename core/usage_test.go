package core

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/core/text"
	"github.com/stretchr/testify/require"
)

// usageInfo is an assistant message's message.updated with its usage so far.
func usageInfo(session, msgID string, in, out, reasoning, read, write int64, cost float64, completed bool) string {
	done := 0
	if completed {
		done = 1_000_000_000
	}
	return fmt.Sprintf(`{"info":{"id":%q,"sessionID":%q,"role":"assistant","time":{"created":1,"completed":%d},`+
		`"tokens":{"input":%d,"output":%d,"reasoning":%d,"cache":{"read":%d,"write":%d}},"cost":%v}}`,
		msgID, session, done, in, out, reasoning, read, write, cost)
}

// A message's figures are its latest, not the sum of its updates; the task sums its messages,
// those of the steps that called tools and of the answer alike, and a resume adds its own.
func TestUsageSumsEachMessageOnce(t *testing.T) {
	h := newFB(t, config.Config{})
	id := h.launch()
	h.busy(id)
	h.oc("message.updated", usageInfo(id, "msg_1", 0, 0, 0, 0, 0, 0, false))
	h.oc("message.updated", usageInfo(id, "msg_1", 100, 10, 0, 0, 0, 0.001, false))
	h.oc("message.updated", usageInfo(id, "msg_1", 100, 20, 5, 50, 7, 0.002, false))
	h.oc("message.updated", usageInfo(id, "msg_2", 200, 30, 0, 80, 0, 0.003, false))
	tk, _ := h.m.Task(id)
	require.Equal(t, &task.Tokens{Input: 300, Output: 50, Reasoning: 5, CacheRead: 130, CacheWrite: 7}, tk.Tokens)
	require.InDelta(t, 0.005, tk.Cost, 1e-12)

	h.answer(id, "", "done")
	tk, _ = h.m.Task(id)
	require.Equal(t, task.StatusCompleted, tk.Status)
	require.Equal(t, int64(300), tk.Tokens.Input, "an answer without usage changes nothing")

	h.resume(id, "more")
	h.busy(id)
	h.oc("message.updated", usageInfo(id, "msg_3", 1000, 1, 0, 0, 0, 0.01, false))
	h.answer(id, "", "more done")
	tk, _ = h.m.Task(id)
	require.Equal(t, task.StatusCompleted, tk.Status)
	require.Equal(t, task.Tokens{Input: 1300, Output: 51, Reasoning: 5, CacheRead: 130, CacheWrite: 7}, *tk.Tokens)
	require.InDelta(t, 0.015, tk.Cost, 1e-12)

	// The record the history keeps carries them.
	var rec struct {
		Task task.Task `json:"task"`
	}
	line := taskLine(h.m.tasks[tk.ID])
	require.NoError(t, json.Unmarshal([]byte(line[17:]), &rec))
	require.Equal(t, tk.Tokens, rec.Task.Tokens)
	require.Equal(t, tk.Cost, rec.Task.Cost)
}

// A task finished from its messages (no events of its answer) counts each assistant message of
// the session, once, whatever the events had already told.
func TestUsageFromTheMessagesRead(t *testing.T) {
	h := newFB(t, config.Config{})
	id := h.launch()
	h.busy(id)
	h.oc("message.updated", usageInfo(id, "msg_1", 10, 1, 0, 0, 0, 0, false))
	eff := h.oc("session.idle", fmt.Sprintf(`{"sessionID":%q}`, id))
	read := ofKind(eff, EffectMessages)
	require.Len(t, read, 1)
	msgs := `[{"info":{"id":"msg_u","role":"user","time":{"created":1}},"parts":[]},` +
		`{"info":{"id":"msg_1","role":"assistant","finish":"tool-calls","time":{"created":2,"completed":3},"tokens":{"input":10,"output":4,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0.5},"parts":[]},` +
		`{"info":{"id":"msg_2","role":"assistant","finish":"stop","time":{"created":4,"completed":5},"tokens":{"input":20,"output":2,"reasoning":1,"cache":{"read":3,"write":0}},"cost":0.25},"parts":[{"type":"text","text":"ok"}]}]`
	h.step(Event{Type: EventEffectDone, EffectID: read[0].ID, OK: true, Result: json.RawMessage(msgs)})
	tk, _ := h.m.Task(id)
	require.Equal(t, task.StatusCompleted, tk.Status)
	require.Equal(t, task.Tokens{Input: 30, Output: 6, Reasoning: 1, CacheRead: 3}, *tk.Tokens)
	require.InDelta(t, 0.75, tk.Cost, 1e-12)
}

// A task whose child reported no usage has none: no tokens key, no cost.
func TestNoUsageNoTokens(t *testing.T) {
	h := newFB(t, config.Config{})
	id := h.launch()
	h.busy(id)
	h.answer(id, "", "done")
	tk, _ := h.m.Task(id)
	require.Nil(t, tk.Tokens)
	require.Zero(t, tk.Cost)
}

// asyncagents_list and asyncagents_output show a task's usage in a few words once OpenCode
// reported some, while it runs too.
func TestUsageInTheTools(t *testing.T) {
	h := newFB(t, config.Config{})
	id := h.launch()
	h.busy(id)
	h.oc("message.updated", usageInfo(id, "msg_1", 12_345, 678, 90, 2_000_000, 0, 0.25, false))
	want := "12.3k in, 678 out, 90 reasoning, 2M cache), $0.25"
	for _, tool := range []string{ToolList, ToolOutput} {
		eff := h.step(Event{Type: EventToolCall, CallID: "peek_" + tool, Tool: tool, SessionID: "ses_p", Args: json.RawMessage(fmt.Sprintf(`{"task_id":%q}`, id))})
		replies := ofKind(eff, EffectToolReply)
		require.Len(t, replies, 1)
		require.Contains(t, replies[0].Output, "2M tokens ("+want, tool)
	}
	require.Equal(t, "950", text.Count(950))
	require.Equal(t, "1k", text.Count(1000))
	require.Equal(t, "$0.0004", text.Cost(0.00042))
}
