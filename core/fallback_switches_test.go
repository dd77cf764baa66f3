package core

import (
	"encoding/json"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

const overloaded = `{"name":"APIError","data":{"message":"Overloaded","statusCode":529,"isRetryable":true}}`

// outputText is what asyncagents_output answers for the task with id.
func (h *fbHarness) outputText(id string) string {
	eff := h.step(Event{Type: EventToolCall, CallID: "out_" + id, Tool: ToolOutput, SessionID: "ses_p",
		Args: json.RawMessage(`{"task_id":"` + id + `"}`)})
	replies := ofKind(eff, EffectToolReply)
	require.Len(h.t, replies, 1)
	return replies[0].Output + replies[0].Error
}

// When every model of the chain fails, the error says so and lists each model's error, in the
// notice and in asyncagents_output alike.
func TestAllModelsFailedListsEachError(t *testing.T) {
	h := newFB(t, chainAB)
	id := h.launch()
	h.answer(id, rateLimited, "")
	h.busy(id)
	eff := h.answer(id, overloaded, "")
	tk, _ := h.m.Task(id)
	require.Equal(t, task.StatusError, tk.Status)
	want := "All fallback models failed after 2 attempts. Rate limit reached for requests | Overloaded"
	require.Equal(t, want, tk.Error.Message)
	var notice string
	for _, e := range prompts(eff, "ses_p") {
		for _, p := range e.Parts {
			notice += p.Text + "\n"
		}
	}
	require.Contains(t, notice, want)
	require.Contains(t, h.outputText(id), want)
}

// A bad request is not a chain running out: its own error stands.
func TestABadRequestAfterAFallbackKeepsItsError(t *testing.T) {
	h := newFB(t, chainAB)
	id := h.launch()
	h.answer(id, rateLimited, "")
	h.busy(id)
	h.answer(id, badRequest, "")
	tk, _ := h.m.Task(id)
	require.Equal(t, task.StatusError, tk.Status)
	require.NotContains(t, tk.Error.Message, "All fallback models failed")
}

// fallback.enabled false runs the task on the chain's first model only: a provider error fails it.
func TestFallbackDisabledRunsTheFirstModelOnly(t *testing.T) {
	cfg := chainAB
	cfg.Fallback.Enabled = config.Bool(false)
	h := newFB(t, cfg)
	id := h.launch()
	require.Equal(t, "mock/mock-a", prompts(h.effects, id)[0].Model)
	eff := h.answer(id, rateLimited, "")
	require.Empty(t, prompts(eff, id), "no second model")
	tk, _ := h.m.Task(id)
	require.Equal(t, task.StatusError, tk.Status)
	require.Equal(t, []string{"mock/mock-a"}, tk.Models)
	require.NotContains(t, tk.Error.Message, "All fallback models failed")
}

// cooldownMs 0 is no cooldown: failures are counted, but the model is never skipped.
func TestCooldownZeroNeverSkips(t *testing.T) {
	cfg := chainAB
	cfg.Fallback.CooldownMs = config.Int64(0)
	h := newFB(t, cfg)
	for i := 0; i < 4; i++ {
		id := h.launch()
		require.Equal(t, "mock/mock-a", prompts(h.effects, id)[0].Model, "launch %d", i)
		h.answer(id, rateLimited, "")
		h.busy(id)
		h.answer(id, "", "ok")
	}
	require.Equal(t, []string{"mock/mock-a failures=4 open=false"}, h.m.ModelHealth())
}
