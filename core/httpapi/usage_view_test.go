package httpapi

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
)

// The stats and a group carry their sums as a page shows them, so the page formats neither; a
// sum with nothing reported has no view.
func TestUsageViewOfTheSums(t *testing.T) {
	tasks := []*task.Task{
		{ID: "a", BatchID: "b", Status: task.StatusCompleted, StartedAt: 1, CompletedAt: 2, Tokens: &task.Tokens{Input: 12_000, Output: 345}, Cost: 0.25},
		{ID: "b", BatchID: "b", Status: task.StatusRunning, StartedAt: 1, Cost: 0.0001},
	}
	s := apiComputeStats(tasks, 10)
	require.Equal(t, &APIUsageView{Tokens: "12.3k", Cost: "$0.25"}, s.View)
	require.Nil(t, apiComputeStats(tasks[1:1], 10).View)
	require.Equal(t, &APIUsageView{Cost: "$0.0001"}, usageView(nil, 0.0001))
	r := apiServeGroup(tasks, "b", 10)
	require.Contains(t, r.Body, `"view":{"tokens":"12.3k","cost":"$0.25"}`)
}
