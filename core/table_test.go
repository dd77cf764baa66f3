package core

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
)

// `asyncagents ls` has a WORKER column only when a task runs on a worker; a local task's cell is "-".
func TestLsShowsTheWorker(t *testing.T) {
	local := task.Task{ID: "bg_local", Status: task.StatusCompleted, Agent: "general", Description: "p", StartedAt: 1, CompletedAt: 2}
	require.NotContains(t, TasksTable([]task.Task{local}, 3), "WORKER")
	remote := local
	remote.ID, remote.Worker = "bg_remote", "w1"
	out := TasksTable([]task.Task{local, remote}, 3)
	require.Contains(t, out, "WORKER")
	require.Regexp(t, `bg_remote .*\s0\s+w1\n`, out)
	require.Regexp(t, `bg_local .*\s0\s+-\n`, out)
}
