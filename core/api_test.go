package core

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/httpapi"
	"github.com/asyncagents/asyncagents/core/internal/tasktest"
	"github.com/asyncagents/asyncagents/core/task"
)

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
	tasks := tasktest.Tasks()
	for i := range tasks {
		tasks[i].Progress.LastTools = nil
	}
	m := apiMachineWith(tasks)
	m.order = append(m.order, "ses_forgotten") // an ID whose task is gone
	for _, path := range []string{"/v1/tasks", "/v1/stats", "/v1/tasks/ses_c", "/v1/task-groups/b1", "/v1/events", "/v1/health"} {
		require.Equal(t, httpapi.ServeTasks(apiGet(path, ""), tasks, tasktest.APIConfig, tasktest.Now), m.ServeHTTP(apiGet(path, ""), tasktest.APIConfig, tasktest.Now), path)
	}
	require.Equal(t, httpapi.SnapshotFrame(tasks, tasktest.Now), m.SnapshotFrame(tasktest.Now))
	for _, tk := range m.tasks {
		require.Nil(t, tk.Progress.LastTools, "the machine's tasks are not changed")
	}
	// Everything the API shows has lastTools as an array, like Machine.Tasks.
	require.NotContains(t, m.ServeHTTP(apiGet("/v1/tasks", ""), tasktest.APIConfig, tasktest.Now).Body, `"lastTools":null`)
	require.NotContains(t, m.ServeHTTP(apiGet("/v1/task-groups/b2", ""), tasktest.APIConfig, tasktest.Now).Body, `"lastTools":null`)
	require.NotContains(t, m.ServeHTTP(apiGet("/v1/tasks/ses_d", ""), tasktest.APIConfig, tasktest.Now).Body, `"lastTools":null`)
	require.NotContains(t, m.SnapshotFrame(tasktest.Now), `"lastTools":null`)
	require.NotContains(t, httpapi.TaskFrame(task.StatusRunning, false, m.tasks["ses_d"].Task, m.now), `"lastTools":null`)
}

// BenchmarkListTasks10kViaMachine is GET /v1/tasks as the envelope would run it: from the
// machine's tasks without copying them (Machine.ServeHTTP), and through Machine.Tasks (which
// copies every task: slower than the request itself).
func BenchmarkListTasks10kViaMachine(b *testing.B) {
	m := apiMachineWith(tasktest.ManyTasks(10_000))
	req := apiGet("/v1/tasks", "")
	b.Run("view", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if r := m.ServeHTTP(req, tasktest.APIConfig, 1); r.Status != 200 {
				b.Fatal(r.Body)
			}
		}
	})
	b.Run("copy", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if r := httpapi.ServeTasks(req, m.Tasks(), tasktest.APIConfig, 1); r.Status != 200 {
				b.Fatal(r.Body)
			}
		}
	})
}

// apiGet builds an authorised GET from a loopback host.
func apiGet(path, query string) httpapi.Request {
	return httpapi.Request{Method: "GET", Path: path, Query: query,
		Headers: map[string]string{"host": "127.0.0.1:5165", "authorization": "Bearer s3cret"}}
}
