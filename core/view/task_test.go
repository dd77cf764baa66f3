package view

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
)

// How the dashboard shows a task at now (4.25 s after it started): the label names a queued task
// and one waiting for permission apart from the running ones, and a failure; the budget line
// counts what is limited, in the columns' formats; the duration runs to now while the task runs,
// to its last activity when it ended without its time; the permission is what the child waits
// to do, while it waits, and for how long.
func TestTaskOf(t *testing.T) {
	const now = 4250
	waiting := []task.PermissionRequest{{ID: "per_1", Permission: "bash", Patterns: []string{"echo hi", "ls"}, At: 1250}}
	answered := []task.PermissionRequest{{ID: "per_1", Permission: "bash", Reply: "once"}}
	wait := &task.Wait{Limit: "concurrency.default", Max: 3, Position: 2}
	for _, c := range []struct {
		name string
		t    task.Task
		want task.View
	}{
		{"running", task.Task{Status: task.StatusRunning}, task.View{Label: "running", Duration: "4.2s"}},
		{"queued", task.Task{Status: task.StatusRunning, Queued: true, Waiting: wait},
			task.View{Label: "queued", Duration: "4.2s", Queue: "position 2 in the queue of concurrency.default, 3 at once"}},
		{"waiting for permission", task.Task{Status: task.StatusRunning, Permissions: waiting},
			task.View{Label: "waiting", Duration: "4.2s", Permission: "bash echo hi, ls", PermissionAt: 1250, PermissionID: "per_1", PermissionWait: "3.0s"}},
		{"permission answered", task.Task{Status: task.StatusRunning, Permissions: answered}, task.View{Label: "running", Duration: "4.2s"}},
		{"resumed", task.Task{Status: task.StatusResumed}, task.View{Label: "resumed", Duration: "4.2s"}},
		{"completed", task.Task{Status: task.StatusCompleted, CompletedAt: 2000}, task.View{Label: "completed", Duration: "2.0s"}},
		{"ended without its time", task.Task{Status: task.StatusCompleted, Progress: task.Progress{LastUpdate: 1500}},
			task.View{Label: "completed", Duration: "1.5s"}},
		{"failed", task.Task{Status: task.StatusError}, task.View{Label: "failed", Duration: "0ms"}},
		{"ended while asking", task.Task{Status: task.StatusCancelled, Permissions: waiting}, task.View{Label: "cancelled", Duration: "0ms"}},
		{"budget", task.Task{Status: task.StatusRunning, Steps: 2, Tokens: &task.Tokens{Input: 1000, Output: 234}, Cost: 0.012,
			Budget: &task.Budget{Steps: 3, Tokens: 5000, CostUsd: 0.5}},
			task.View{Label: "running", Budget: "2 of 3 model calls · 1.2k of 5k tokens · $0.01 of $0.50", Duration: "4.2s", Tokens: "1.2k", Cost: "$0.01"}},
		{"a budget of steps alone", task.Task{Status: task.StatusCompleted, Budget: &task.Budget{Steps: 3}},
			task.View{Label: "completed", Budget: "0 of 3 model calls", Duration: "0ms"}},
		{"tokens reported, none spent yet", task.Task{Status: task.StatusRunning, Tokens: &task.Tokens{}},
			task.View{Label: "running", Duration: "4.2s", Tokens: "0"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, *TaskOf(&c.t, now))
		})
	}
}

// What holds a task at work is told while it works, and nothing of it once it ended: the tools'
// answers, the rows and the dashboard all read it here.
func TestHoldOf(t *testing.T) {
	asking := []task.PermissionRequest{{ID: "per_1", Permission: "bash", At: 1}}
	retry := &task.Retry{Attempt: 2, Message: "HTTP 500"}
	working := task.Task{Status: task.StatusRunning, Permissions: asking, Retry: retry, StalledSince: 7}
	h := HoldOf(&working)
	require.Equal(t, "per_1", h.Permission.ID)
	require.Equal(t, retry, h.Retry)
	require.Equal(t, int64(7), h.StalledSince)
	for _, s := range []task.Status{task.StatusCompleted, task.StatusError, task.StatusCancelled} {
		ended := working
		ended.Status = s
		require.Equal(t, Hold{}, HoldOf(&ended), s)
	}
}
