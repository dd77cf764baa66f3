package httpapi

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/internal/tasktest"
	"github.com/asyncagents/asyncagents/core/task"
)

// BenchmarkListTasks10k is GET /v1/tasks over 10,000 tasks: the default page, and a filtered,
// searched, offset page.
func BenchmarkListTasks10k(b *testing.B) {
	tasks := tasktest.ManyTasks(10_000)
	now := int64(1_700_000_000_000 + 10_000*1000)
	for _, q := range []string{"", "limit=200", "status=completed&search=AUTH+service&limit=20&offset=100", "agent=explore&search=module+99"} {
		b.Run("q="+q, func(b *testing.B) {
			req := apiGet("/v1/tasks", q)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				r := ServeTasks(req, tasks, tasktest.APIConfig, now)
				if r.Status != 200 {
					b.Fatal(r.Body)
				}
			}
		})
	}
}

// BenchmarkStatsAndSnapshot10k prices the whole-store answers: /v1/stats and an SSE snapshot.
func BenchmarkStatsAndSnapshot10k(b *testing.B) {
	tasks := tasktest.ManyTasks(10_000)
	now := int64(1_700_000_000_000 + 10_000*1000)
	b.Run("stats", func(b *testing.B) {
		req := apiGet("/v1/stats", "")
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			ServeTasks(req, tasks, tasktest.APIConfig, now)
		}
	})
	b.Run("snapshot", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			SnapshotFrame(tasks, now)
		}
	})
}

func TestHTTPListPagesOutOfStartOrder(t *testing.T) {
	// Launch order is not start order (the sorting path): pages still cut the sorted list.
	var tasks []task.Task
	for i := 0; i < 30; i++ {
		tasks = append(tasks, task.Task{ID: fmt.Sprintf("t%02d", i), StartedAt: int64((i * 7) % 30), Agent: []string{"a", "b"}[i%2]})
	}
	all := tasktest.ListIDs(t, ServeTasks(apiGet("/v1/tasks", ""), tasks, tasktest.APIConfig, tasktest.Now).Body)
	require.Len(t, all, 30)
	for i := 1; i < len(all); i++ {
		var a, b int
		fmt.Sscanf(all[i-1], "t%d", &a)
		fmt.Sscanf(all[i], "t%d", &b)
		require.Greater(t, (a*7)%30, (b*7)%30)
	}
	for _, c := range []struct{ offset, limit int }{{0, 5}, {5, 5}, {25, 10}, {29, 1}, {30, 1}, {31, 50}, {3, 0}} {
		r := ServeTasks(apiGet("/v1/tasks", fmt.Sprintf("offset=%d&limit=%d", c.offset, c.limit)), tasks, tasktest.APIConfig, tasktest.Now)
		want := all[min(c.offset, 30):min(c.offset+c.limit, 30)]
		require.Equal(t, want, tasktest.ListIDs(t, r.Body), "offset %d limit %d", c.offset, c.limit)
		require.EqualValues(t, 30, tasktest.Decode(t, r.Body)["total"])
	}
	r := ServeTasks(apiGet("/v1/tasks", "agent=b&limit=3&offset=2"), tasks, tasktest.APIConfig, tasktest.Now)
	require.EqualValues(t, 15, tasktest.Decode(t, r.Body)["total"])
	require.Len(t, tasktest.ListIDs(t, r.Body), 3)
}

// TestHTTPListPagesMatchSortedPath: the backward pass and the sort give the same pages.
func TestHTTPListPagesMatchSortedPath(t *testing.T) {
	tasks := tasktest.ManyTasks(500)
	for i := range tasks {
		tasks[i].StartedAt = int64(i / 3) // ties in threes
	}
	for _, q := range []string{"", "limit=7&offset=11", "status=completed&limit=200", "search=module+1&offset=3&limit=4", "offset=499", "offset=500"} {
		f, bad := apiParseListQuery(func() []apiQueryParam { p, _ := apiParseQuery(q); return p }())
		require.Empty(t, bad)
		fast, total := apiPage(apiPtrs(tasks), &f)
		all := apiNewestFirst(apiPtrs(tasks), f.match)
		require.Equal(t, len(all), total, q)
		want := all[min(f.offset, len(all)):min(f.offset+f.limit, len(all))]
		require.Equal(t, append([]int{}, want...), append([]int{}, fast...), q)
	}
}

// GET /v1/tasks writes what encoding/json writes for APITaskList, empty pages included.
func TestAPITaskListEncodesAsTheStruct(t *testing.T) {
	tasks := tasktest.ManyTasks(30)
	tasks[4].Error = &task.TaskError{Name: "E", Message: "<&>"}
	for _, query := range []string{"", "limit=1", "limit=200&offset=3", "offset=100", "status=running&search=zzz"} {
		resp := ServeTasks(apiGet("/v1/tasks", query), tasks, tasktest.APIConfig, tasktest.Now)
		require.Equal(t, 200, resp.Status, query)
		var list APITaskList
		require.NoError(t, json.Unmarshal([]byte(resp.Body), &list), query)
		want, err := json.Marshal(list)
		require.NoError(t, err)
		require.Equal(t, string(want), resp.Body, query)
	}
}
