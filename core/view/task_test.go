package view

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
)

// How the dashboard shows a task: the label names a queued task and one waiting for permission
// apart from the running ones, and a failure; the budget line counts what is limited, in the
// columns' formats; the permission is what the child waits to do, while it waits.
func TestTaskOf(t *testing.T) {
	waiting := []task.PermissionRequest{{ID: "per_1", Permission: "bash", Patterns: []string{"echo hi", "ls"}, At: 1}}
	answered := []task.PermissionRequest{{ID: "per_1", Permission: "bash", Reply: "once"}}
	for _, c := range []struct {
		name string
		t    task.Task
		want task.View
	}{
		{"running", task.Task{Status: task.StatusRunning}, task.View{Label: "running"}},
		{"queued", task.Task{Status: task.StatusRunning, Queued: true}, task.View{Label: "queued"}},
		{"waiting for permission", task.Task{Status: task.StatusRunning, Permissions: waiting},
			task.View{Label: "waiting", Permission: "bash echo hi, ls", PermissionAt: 1, PermissionID: "per_1"}},
		{"permission answered", task.Task{Status: task.StatusRunning, Permissions: answered}, task.View{Label: "running"}},
		{"resumed", task.Task{Status: task.StatusResumed}, task.View{Label: "resumed"}},
		{"completed", task.Task{Status: task.StatusCompleted}, task.View{Label: "completed"}},
		{"failed", task.Task{Status: task.StatusError}, task.View{Label: "failed"}},
		{"ended while asking", task.Task{Status: task.StatusCancelled, Permissions: waiting}, task.View{Label: "cancelled"}},
		{"budget", task.Task{Status: task.StatusRunning, Steps: 2, Tokens: &task.Tokens{Input: 1000, Output: 234}, Cost: 0.012,
			Budget: &task.Budget{Steps: 3, Tokens: 5000, CostUsd: 0.5}},
			task.View{Label: "running", Budget: "2 of 3 model calls · 1.2k of 5k tokens · $0.01 of $0.50"}},
		{"a budget of steps alone", task.Task{Status: task.StatusCompleted, Budget: &task.Budget{Steps: 3}},
			task.View{Label: "completed", Budget: "0 of 3 model calls"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, *TaskOf(&c.t))
		})
	}
}
