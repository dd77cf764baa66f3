package view

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
)

// Rows of alike tasks from two sessions tell themselves apart: each names its parent's title (or
// its batch's name when OpenCode told none), its start, and the end of its ID.
func TestListRowsTellAlikeTasksApart(t *testing.T) {
	tasks := []*task.Task{
		{ID: "bg_000000000001aaaaaa1111", ParentSessionID: "ses_a", BatchID: "m1", ParentTitle: "Fix the login", Description: "job 1", Agent: "general", Status: task.StatusCompleted, StartedAt: 1_000, CompletedAt: 2_000},
		{ID: "bg_000000000002bbbbbb2222", ParentSessionID: "ses_b", BatchID: "m2", Description: "job 1", Agent: "general", Status: task.StatusRunning, StartedAt: 200_000},
		{ID: "bg_000000000003cccccc3333", ParentSessionID: "ses_b", BatchID: "m2", Description: "job 2", Agent: "explore", Status: task.StatusRunning, StartedAt: 200_001},
	}
	l := TaskList(tasks, 3_800_000, Opts{}, "")
	require.Equal(t, []string{"bg_000000000003cccccc3333", "bg_000000000002bbbbbb2222", "bg_000000000001aaaaaa1111"}, ids(l.Rows))
	require.Equal(t, "job 1, job 2", l.Rows[1].Origin, "no title: the batch's name")
	require.Equal(t, "Fix the login", l.Rows[2].Origin)
	require.Equal(t, "…bb2222", l.Rows[1].ShortID)
	require.Equal(t, "job 1, job 2 · started 1h ago · …bb2222 · general · 1h00m", l.Rows[1].ListDetail)
	require.Equal(t, "Fix the login · started 1h ago · …aa1111 · general · 1s", l.Rows[2].ListDetail)
	tasks[0].Worker = "w1"
	l = TaskList(tasks, 3_800_000, Opts{}, "")
	require.Equal(t, "on worker w1 · Fix the login · started 1h ago · …aa1111 · general · 1s", l.Rows[2].ListDetail,
		"the worker first, where the dialog does not cut it, and once")
	require.Equal(t, "Keep running", l.CancelKeep)
	require.Equal(t, "Cancel task", l.CancelConfirm)
}

// A filter keeps the list newest first, matches the description, origin or agent (any case) or
// an ID, and says so when nothing matches.
func TestListFilterKeepsNewestFirst(t *testing.T) {
	var tasks []*task.Task
	for i, d := range []string{"job 3", "job 1", "job 3", "other", "JOB 3"} {
		tasks = append(tasks, &task.Task{ID: "bg_" + string(rune('a'+i)), BatchID: "m", ParentTitle: "Session", Description: d, Status: task.StatusCompleted, StartedAt: int64(i * 1000)})
	}
	l := TaskList(tasks, 10_000, Opts{}, "job 3")
	require.Equal(t, []string{"bg_e", "bg_c", "bg_a"}, ids(l.Rows), "newest first, whatever matched best")
	require.Equal(t, "job 3", l.Query)
	require.Equal(t, []string{"bg_d"}, ids(TaskList(tasks, 10_000, Opts{}, "OTHER").Rows))
	require.Len(t, TaskList(tasks, 10_000, Opts{}, "session").Rows, 5, "the origin matches")
	require.Equal(t, []string{"bg_b"}, ids(TaskList(tasks, 10_000, Opts{}, "bg_b").Rows), "an ID")
	require.Empty(t, TaskList(tasks, 10_000, Opts{}, "bg_").Rows, "too short to name an ID")
	tasks[3].Worker = "w1"
	require.Equal(t, []string{"bg_d"}, ids(TaskList(tasks, 10_000, Opts{}, "W1").Rows), "the worker's name")
	require.Equal(t, []string{"bg_d"}, ids(TaskList(tasks, 10_000, Opts{}, "worker").Rows), "on a worker")
	none := TaskList(tasks, 10_000, Opts{}, "nothing")
	require.Empty(t, none.Rows)
	require.Equal(t, `No background task matches "nothing"`, none.Empty)
}
