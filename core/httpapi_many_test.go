package core

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

func apiManyTasks(n int) []task.Task {
	agents := []string{"explore", "general", "build", "reviewer"}
	statuses := []task.Status{task.StatusCompleted, task.StatusCompleted, task.StatusCompleted, task.StatusError, task.StatusCancelled, task.StatusRunning, task.StatusResumed}
	tasks := make([]task.Task, n)
	for i := range tasks {
		st := statuses[i%len(statuses)]
		t := task.Task{
			ID: fmt.Sprintf("ses_%08d", i), SessionID: fmt.Sprintf("ses_%08d", i), ParentSessionID: "ses_parent", ParentMessageID: fmt.Sprintf("msg_%d", i/4),
			BatchID: fmt.Sprintf("batch_%d", i/4), Description: fmt.Sprintf("Investigate module %d of the auth service", i),
			Prompt: strings.Repeat("Look at the code and report what you find. ", 6), Agent: agents[i%len(agents)],
			Status: st, StartedAt: int64(1_700_000_000_000 + i*1000), Depth: 1,
			Progress: task.Progress{ToolCalls: i % 37, LastTools: []string{"read", "grep", "glob"}, LastUpdate: int64(1_700_000_000_000 + i*1000 + 500)},
		}
		if st.Terminal() {
			t.CompletedAt = t.StartedAt + int64(1000+i%5000)
			t.Result = strings.Repeat("result text ", 20)
		}
		if st == task.StatusError {
			t.Error = &task.TaskError{Name: "ProviderError", Message: "rate limited"}
		}
		tasks[i] = t
	}
	return tasks
}

// BenchmarkListTasks10k is GET /v1/tasks over 10,000 tasks: the default page, and a filtered,
// searched, offset page.
func BenchmarkListTasks10k(b *testing.B) {
	tasks := apiManyTasks(10_000)
	now := int64(1_700_000_000_000 + 10_000*1000)
	for _, q := range []string{"", "limit=200", "status=completed&search=AUTH+service&limit=20&offset=100", "agent=explore&search=module+99"} {
		b.Run("q="+q, func(b *testing.B) {
			req := apiGet("/v1/tasks", q)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				r := ServeHTTP(req, tasks, apiCfg, now)
				if r.Status != 200 {
					b.Fatal(r.Body)
				}
			}
		})
	}
}

// BenchmarkStatsAndSnapshot10k prices the whole-store answers: /v1/stats and an SSE snapshot.
func BenchmarkStatsAndSnapshot10k(b *testing.B) {
	tasks := apiManyTasks(10_000)
	now := int64(1_700_000_000_000 + 10_000*1000)
	b.Run("stats", func(b *testing.B) {
		req := apiGet("/v1/stats", "")
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			ServeHTTP(req, tasks, apiCfg, now)
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
	all := apiListIDs(t, ServeHTTP(apiGet("/v1/tasks", ""), tasks, apiCfg, apiNow).Body)
	require.Len(t, all, 30)
	for i := 1; i < len(all); i++ {
		var a, b int
		fmt.Sscanf(all[i-1], "t%d", &a)
		fmt.Sscanf(all[i], "t%d", &b)
		require.Greater(t, (a*7)%30, (b*7)%30)
	}
	for _, c := range []struct{ offset, limit int }{{0, 5}, {5, 5}, {25, 10}, {29, 1}, {30, 1}, {31, 50}, {3, 0}} {
		r := ServeHTTP(apiGet("/v1/tasks", fmt.Sprintf("offset=%d&limit=%d", c.offset, c.limit)), tasks, apiCfg, apiNow)
		want := all[min(c.offset, 30):min(c.offset+c.limit, 30)]
		require.Equal(t, want, apiListIDs(t, r.Body), "offset %d limit %d", c.offset, c.limit)
		require.EqualValues(t, 30, apiDecode(t, r.Body)["total"])
	}
	r := ServeHTTP(apiGet("/v1/tasks", "agent=b&limit=3&offset=2"), tasks, apiCfg, apiNow)
	require.EqualValues(t, 15, apiDecode(t, r.Body)["total"])
	require.Len(t, apiListIDs(t, r.Body), 3)
}

// TestHTTPListPagesMatchSortedPath: the backward pass and the sort give the same pages.
func TestHTTPListPagesMatchSortedPath(t *testing.T) {
	tasks := apiManyTasks(500)
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

// apiMachineWith returns a machine holding tasks, in that launch order.
func apiMachineWith(tasks []task.Task) *Machine {
	m := NewMachine(config.Config{})
	for _, t := range tasks {
		t := t
		m.tasks[t.ID] = &run{Task: t}
		m.order = append(m.order, t.ID)
	}
	return m
}

func TestHTTPMachineServesItsOwnTasks(t *testing.T) {
	tasks := apiTasks()
	for i := range tasks {
		tasks[i].Progress.LastTools = nil
	}
	m := apiMachineWith(tasks)
	m.order = append(m.order, "ses_forgotten") // an ID whose task is gone
	for _, path := range []string{"/v1/tasks", "/v1/stats", "/v1/tasks/ses_c", "/v1/task-groups/b1", "/v1/events", "/v1/health"} {
		require.Equal(t, ServeHTTP(apiGet(path, ""), tasks, apiCfg, apiNow), m.ServeHTTP(apiGet(path, ""), apiCfg, apiNow), path)
	}
	require.Equal(t, SnapshotFrame(tasks, apiNow), m.SnapshotFrame(apiNow))
	for _, tk := range m.tasks {
		require.Nil(t, tk.Progress.LastTools, "the machine's tasks are not changed")
	}
	// Everything the API shows has lastTools as an array, like Machine.Tasks.
	require.NotContains(t, m.ServeHTTP(apiGet("/v1/tasks", ""), apiCfg, apiNow).Body, `"lastTools":null`)
	require.NotContains(t, m.ServeHTTP(apiGet("/v1/task-groups/b2", ""), apiCfg, apiNow).Body, `"lastTools":null`)
	require.NotContains(t, m.ServeHTTP(apiGet("/v1/tasks/ses_d", ""), apiCfg, apiNow).Body, `"lastTools":null`)
	require.NotContains(t, m.SnapshotFrame(apiNow), `"lastTools":null`)
	require.NotContains(t, TaskFrame(task.StatusRunning, false, m.tasks["ses_d"].Task), `"lastTools":null`)
}

// BenchmarkListTasks10kViaMachine is GET /v1/tasks as the envelope would run it: from the
// machine's tasks without copying them (Machine.ServeHTTP), and through Machine.Tasks (which
// copies every task: slower than the request itself).
func BenchmarkListTasks10kViaMachine(b *testing.B) {
	m := apiMachineWith(apiManyTasks(10_000))
	req := apiGet("/v1/tasks", "")
	b.Run("view", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if r := m.ServeHTTP(req, apiCfg, 1); r.Status != 200 {
				b.Fatal(r.Body)
			}
		}
	})
	b.Run("copy", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if r := ServeHTTP(req, m.Tasks(), apiCfg, 1); r.Status != 200 {
				b.Fatal(r.Body)
			}
		}
	})
}

// GET /v1/tasks writes what encoding/json writes for APITaskList, empty pages included.
func TestAPITaskListEncodesAsTheStruct(t *testing.T) {
	tasks := apiManyTasks(30)
	tasks[4].Error = &task.TaskError{Name: "E", Message: "<&>"}
	for _, query := range []string{"", "limit=1", "limit=200&offset=3", "offset=100", "status=running&search=zzz"} {
		resp := ServeHTTP(apiGet("/v1/tasks", query), tasks, apiCfg, apiNow)
		require.Equal(t, 200, resp.Status, query)
		var list APITaskList
		require.NoError(t, json.Unmarshal([]byte(resp.Body), &list), query)
		want, err := json.Marshal(list)
		require.NoError(t, err)
		require.Equal(t, string(want), resp.Body, query)
	}
}
