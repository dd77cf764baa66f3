package httpapi

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/internal/tasktest"
	"github.com/asyncagents/asyncagents/core/task"
)

// sort= orders every matching task, not the page alone; status=queued picks the tasks waiting
// for a slot, which status=running leaves out.
func TestListSortsAcrossAllTasks(t *testing.T) {
	mk := func(id, desc string, started, completed int64, cost float64, queued bool) *task.Task {
		st := task.StatusCompleted
		if completed == 0 {
			st = task.StatusRunning
		}
		return &task.Task{ID: id, Description: desc, Agent: "general", Status: st, StartedAt: started, CompletedAt: completed, Cost: cost, Queued: queued,
			Tokens: &task.Tokens{Input: int64(cost * 1000)}}
	}
	tasks := []*task.Task{
		mk("a", "bravo", 10, 20, 0.5, false), // 10 ms
		mk("b", "Alpha", 20, 90, 0.1, false), // 70 ms
		mk("c", "delta", 30, 0, 0.9, false),  // running: 70 ms at now 100
		mk("d", "charlie", 40, 0, 0, true),   // queued
		mk("e", "echo", 50, 55, 0.3, false),  // 5 ms
	}
	cfg := config.APIConfig{Token: "s3cret"}
	cases := []struct {
		query string
		ids   []string
		total int
	}{
		{"", []string{"e", "d", "c", "b", "a"}, 5},
		{"order=asc", []string{"a", "b", "c", "d", "e"}, 5},
		{"sort=cost", []string{"c", "a", "e", "b", "d"}, 5},
		{"sort=cost&order=asc&limit=2", []string{"d", "b"}, 5},
		{"sort=cost&offset=3", []string{"b", "d"}, 5},
		{"sort=tokens&limit=1", []string{"c"}, 5},
		{"sort=description&order=asc", []string{"b", "a", "d", "c", "e"}, 5},
		{"sort=duration&status=completed", []string{"b", "a", "e"}, 3},
		{"sort=status&order=asc", []string{"e", "b", "a", "d", "c"}, 5},
		{"status=queued", []string{"d"}, 1},
		{"status=running", []string{"c"}, 1},
		{"status=running,queued", []string{"d", "c"}, 2},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			r := Serve(apiGet("/v1/tasks", c.query), tasks, cfg, 100)
			require.Equal(t, 200, r.Status, r.Body)
			m := tasktest.Decode(t, r.Body)
			var ids []string
			for _, x := range m["tasks"].([]any) {
				ids = append(ids, x.(map[string]any)["id"].(string))
			}
			require.Equal(t, c.ids, ids)
			require.EqualValues(t, c.total, m["total"])
		})
	}
	for q, msg := range map[string]string{
		"sort=price": `invalid sort "price": allowed values are startedAt, description, agent, status, duration, model, tokens, cost (default startedAt)`,
		"order=up":   `invalid order "up": allowed values are asc, desc (default desc)`,
	} {
		r := Serve(apiGet("/v1/tasks", q), tasks, cfg, 100)
		require.Equal(t, 400, r.Status)
		require.JSONEq(t, `{"error":`+quote(msg)+`}`, r.Body)
	}
}

func quote(s string) string {
	b := []byte{'"'}
	for _, r := range s {
		if r == '"' {
			b = append(b, '\\')
		}
		b = append(b, string(r)...)
	}
	return string(append(b, '"'))
}
