package core

import (
	"fmt"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/core/view"
	"github.com/stretchr/testify/require"
)

// The attempts a page lists: each with its real start and end; a user's cancel ends the last one
// as cancelled, never as its model failing; and a chain of one model that did not fail lists
// none (issue 37).
func TestAttemptsAsAPageShowsThem(t *testing.T) {
	one := config.Config{Agents: map[string]config.AgentModels{"general": {Models: []string{"mock/mock-a"}}}}
	h := newFB(t, one)
	id := h.launch()
	h.busy(id)
	h.call(ToolCancel, fmt.Sprintf(`{"task_id":%q}`, id))
	tk, _ := h.m.Task(id)
	require.Equal(t, task.StatusCancelled, tk.Status)
	require.Nil(t, view.TaskOf(&tk, 0).Attempts, "one model, nothing failed: no fallback to show")

	h = newFB(t, chainAB)
	started := h.now
	id = h.launch()
	h.busy(id)
	h.answer(id, rateLimited, "")
	tk, _ = h.m.Task(id)
	require.Equal(t, task.StatusRunning, tk.Status, "on to B")
	h.busy(id)
	h.wait(60_000)
	h.call(ToolCancel, fmt.Sprintf(`{"task_id":%q}`, id))
	tk, _ = h.m.Task(id)
	require.Equal(t, task.StatusCancelled, tk.Status)
	got := view.TaskOf(&tk, 0).Attempts
	require.Len(t, got, 2)
	require.Equal(t, "mock/mock-a", got[0].Model)
	require.Equal(t, "failed (rate_limit)", got[0].Outcome)
	require.Equal(t, view.ToneError, got[0].Tone)
	require.GreaterOrEqual(t, got[0].From, started)
	require.Greater(t, got[0].To, got[0].From, "it failed after it began")
	require.Equal(t, "mock/mock-b", got[1].Model)
	require.Equal(t, "cancelled (the task was cancelled)", got[1].Outcome, "a cancel is no model failure")
	require.NotEqual(t, view.ToneError, got[1].Tone)
	require.Equal(t, tk.CompletedAt, got[1].To, "ended when the task did")
	require.GreaterOrEqual(t, got[1].To-got[1].From, int64(60_000), "its real span, not its start")
}
