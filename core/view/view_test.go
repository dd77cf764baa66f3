package view

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
)

func TestUsage(t *testing.T) {
	for _, c := range []struct {
		name   string
		tokens *task.Tokens
		cost   float64
		want   string
	}{
		{"nothing reported", nil, 0, ""},
		{"reported, still nothing", &task.Tokens{}, 0, ""},
		{"tokens, no price", &task.Tokens{Input: 900, Output: 50}, 0, "950 tok"},
		{"thousands", &task.Tokens{Input: 12_000, Output: 300}, 0, "12.3k tok"},
		{"round thousands", &task.Tokens{Input: 1000}, 0, "1k tok"},
		{"millions", &task.Tokens{Input: 4_100_000}, 0, "4.1M tok"},
		{"priced: the cost wins", &task.Tokens{Input: 12_000}, 0.042, "$0.04"},
		{"cheap: four decimals", &task.Tokens{Input: 10}, 0.00042, "$0.0004"},
	} {
		tk := &task.Task{Tokens: c.tokens, Cost: c.cost}
		require.Equal(t, c.want, Usage(tk), c.name)
	}
}

const now = 1_000_000

func TestMakeRow(t *testing.T) {
	for _, c := range []struct {
		name  string
		task  task.Task
		opts  Opts
		group string
		mark  string
		tone  string
		note  string
		// detail is the second line; cancel whether a cancel is offered.
		detail string
		cancel bool
	}{
		{name: "running", task: task.Task{Status: task.StatusRunning, StartedAt: now - 125_000},
			group: GroupRunning, mark: "●", tone: ToneAccent, detail: "explore · 2m05s", cancel: true},
		{name: "on a worker", task: task.Task{Status: task.StatusRunning, StartedAt: now - 5_000, Worker: "w1", Tokens: &task.Tokens{Input: 1500}},
			group: GroupRunning, mark: "●", tone: ToneAccent, detail: "explore on worker w1 · 5s · 1.5k tok", cancel: true},
		{name: "running with usage", task: task.Task{Status: task.StatusRunning, StartedAt: now - 5_000, Tokens: &task.Tokens{Input: 1500}},
			group: GroupRunning, mark: "●", tone: ToneAccent, detail: "explore · 5s · 1.5k tok", cancel: true},
		{name: "resumed runs again", task: task.Task{Status: task.StatusResumed, StartedAt: now - 1_000},
			group: GroupRunning, mark: "●", tone: ToneAccent, detail: "explore · 1s", cancel: true},
		{name: "queued, with its place", task: task.Task{Status: task.StatusRunning, Queued: true, StartedAt: now - 3_000,
			Waiting: &task.Wait{Limit: "maxConcurrentStarts", Max: 2, Position: 3}},
			group: GroupQueued, mark: "○", tone: ToneMuted, note: "position 3 in the queue of maxConcurrentStarts, 2 at once", detail: "explore · 3s", cancel: true},
		{name: "stalled", task: task.Task{Status: task.StatusRunning, StartedAt: now - 400_000, StalledSince: now - 310_000},
			group: GroupRunning, mark: "●", tone: ToneWarning, note: "stalled for 5m10s", detail: "explore · 6m40s", cancel: true},
		{name: "waiting for permission, before a stall", task: task.Task{Status: task.StatusRunning, StartedAt: now - 5_000, StalledSince: now - 1_000,
			Permissions: []task.PermissionRequest{{ID: "per_1", Permission: "bash", Patterns: []string{"echo hi"}, At: now - 2_000}}},
			group: GroupRunning, mark: "●", tone: ToneWarning, note: "waits for permission: bash echo hi", detail: "explore · 5s", cancel: true},
		{name: "completed", task: task.Task{Status: task.StatusCompleted, StartedAt: now - 60_000, CompletedAt: now - 20_000, Cost: 0.5},
			group: GroupFinished, mark: "✓", tone: ToneSuccess, detail: "explore · 40s · $0.50"},
		{name: "failed", task: task.Task{Status: task.StatusError, StartedAt: now - 60_000, CompletedAt: now - 50_000, Error: &task.TaskError{Name: "APIError"}},
			group: GroupFinished, mark: "✗", tone: ToneError, detail: "explore · 10s"},
		{name: "over budget", task: task.Task{Status: task.StatusError, StartedAt: now - 60_000, CompletedAt: now - 50_000, Error: &task.TaskError{Name: "BudgetExceeded"}},
			group: GroupFinished, mark: "✗", tone: ToneWarning, note: "over budget", detail: "explore · 10s"},
		{name: "cancelled", task: task.Task{Status: task.StatusCancelled, StartedAt: now - 60_000, CompletedAt: now - 59_000},
			group: GroupFinished, mark: "⊘", tone: ToneMuted, detail: "explore · 1s"},
		{name: "a stall ends with the task", task: task.Task{Status: task.StatusCompleted, StartedAt: now - 60_000, CompletedAt: now, StalledSince: now - 30_000},
			group: GroupFinished, mark: "✓", tone: ToneSuccess, detail: "explore · 1m00s"},
		{name: "read-only: no cancel", task: task.Task{Status: task.StatusRunning, StartedAt: now}, opts: Opts{ReadOnly: true},
			group: GroupRunning, mark: "●", tone: ToneAccent, detail: "explore · 0s"},
	} {
		tk := c.task
		tk.ID, tk.SessionID, tk.Agent, tk.Description = "bg_1", "ses_c", "explore", "Find auth"
		r := MakeRow(&tk, now, c.opts)
		require.Equal(t, c.group, r.Group, c.name)
		require.Equal(t, c.mark, r.Mark, c.name)
		require.Equal(t, c.tone, r.Tone, c.name)
		require.Equal(t, c.note, r.Note, c.name)
		require.Equal(t, c.detail, r.Detail, c.name)
		require.Equal(t, c.cancel, r.Cancel != "", c.name)
		require.Equal(t, "ses_c", r.SessionID, c.name)
	}
}

// fixture: session ses_p launched a running, two queued and seven finished tasks, one of which
// (its child session ses_c1) launched a task of its own; ses_other launched one.
func fixture() []*task.Task {
	var out []*task.Task
	add := func(id, parent, session string, st task.Status, started, completed int64) *task.Task {
		t := &task.Task{ID: id, ParentSessionID: parent, SessionID: session, Status: st, StartedAt: started,
			CompletedAt: completed, Description: "task " + id, Agent: "general"}
		out = append(out, t)
		return t
	}
	for i := range 7 {
		add(fmt.Sprintf("bg_f%d", i), "ses_p", fmt.Sprintf("ses_c%d", i), task.StatusCompleted, int64(i)*100, 1000+int64(i)*100)
	}
	add("bg_run2", "ses_p", "ses_r2", task.StatusRunning, 5000, 0)
	add("bg_run1", "ses_p", "ses_r1", task.StatusRunning, 4000, 0)
	q2 := add("bg_q2", "ses_p", "", task.StatusRunning, 6000, 0)
	q2.Queued, q2.Waiting = true, &task.Wait{Limit: "maxConcurrentStarts", Max: 2, Position: 2}
	q1 := add("bg_q1", "ses_p", "", task.StatusRunning, 7000, 0)
	q1.Queued, q1.Waiting = true, &task.Wait{Limit: "maxConcurrentStarts", Max: 2, Position: 1}
	add("bg_grand", "ses_c1", "ses_g", task.StatusRunning, 8000, 0)
	add("bg_other", "ses_other", "ses_o", task.StatusRunning, 9000, 0)
	return out
}

func ids(rows []Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.ID
	}
	return out
}

func TestSessionSection(t *testing.T) {
	s := SessionSection(fixture(), "ses_p", 10_000, Opts{})
	require.Equal(t, []string{
		"bg_run1", "bg_run2", "bg_grand", // running, in launch order, the child's child included
		"bg_q1", "bg_q2", // queued, by their place in the queue
		"bg_f6", "bg_f5", "bg_f4", "bg_f3", "bg_f2", // the latest finished
	}, ids(s.Rows))
	require.Equal(t, "+2 more finished", s.More)
	require.Equal(t, "3 running · 2 queued", s.Summary)
	require.True(t, s.Live)
	require.Equal(t, "Background tasks", s.Title)

	// A child's own section: its task only.
	c1 := SessionSection(fixture(), "ses_c1", 10_000, Opts{})
	require.Equal(t, []string{"bg_grand"}, ids(c1.Rows))
	require.Equal(t, "1 running", c1.Summary)

	// Nothing: no summary (the prompt shows nothing), rows an empty list.
	none := SessionSection(fixture(), "ses_none", 10_000, Opts{})
	require.Empty(t, none.Rows)
	require.NotNil(t, none.Rows)
	require.Equal(t, "", none.Summary)
	require.False(t, none.Live)

	// Finished only: listed, no summary, not live.
	done := []*task.Task{{ID: "bg_d", ParentSessionID: "ses_x", Status: task.StatusCompleted, StartedAt: 1, CompletedAt: 2}}
	d := SessionSection(done, "ses_x", 10, Opts{})
	require.Len(t, d.Rows, 1)
	require.Equal(t, "", d.Summary)
	require.Equal(t, "", d.More)
	require.False(t, d.Live)

	only := []*task.Task{{ID: "bg_q", ParentSessionID: "ses_x", Status: task.StatusRunning, Queued: true}}
	require.Equal(t, "1 queued", SessionSection(only, "ses_x", 10, Opts{}).Summary)
}

func TestTaskList(t *testing.T) {
	l := TaskList(fixture(), 10_000, Opts{}, "")
	require.Len(t, l.Rows, 13)
	require.Equal(t, []string{"bg_other", "bg_grand", "bg_q1", "bg_q2", "bg_run2", "bg_run1", "bg_f6"}, ids(l.Rows)[:7], "newest first")
	require.True(t, l.Live)
	require.Equal(t, CancelKey, l.CancelKey)

	var many []*task.Task
	for i := range ListMax + 10 {
		many = append(many, &task.Task{ID: fmt.Sprint(i), Status: task.StatusCompleted, StartedAt: int64(i), CompletedAt: int64(i) + 1})
	}
	same := []*task.Task{{ID: "first", StartedAt: 5}, {ID: "second", StartedAt: 5}, {ID: "old", StartedAt: 1}}
	require.Equal(t, []string{"second", "first", "old"}, ids(TaskList(same, 10, Opts{}, "").Rows), "launched together: the later launch first")

	l = TaskList(many, 10_000, Opts{}, "")
	require.Len(t, l.Rows, ListMax)
	require.Equal(t, fmt.Sprint(ListMax+9), l.Rows[0].ID)
	require.False(t, l.Live)
}

// A count agrees with its noun: one of it, or several, or none.
func TestCountOf(t *testing.T) {
	require.Equal(t, "2 of 1 model call", budgetSteps(2, 1))
	require.Equal(t, "+1 more finished", moreFinished(1))
}
