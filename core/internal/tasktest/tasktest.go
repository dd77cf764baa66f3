// Package tasktest holds the task fixtures the tests of the status API and of the machine share.
// Only tests import it; it imports config and task, nothing above.
package tasktest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// Tasks is the fixture the Go tests share (the conformance files under core/conformance/http
// carry the same five tasks).
func Tasks() []task.Task {
	return []task.Task{
		{ID: "ses_a", ParentSessionID: "ses_p", BatchID: "b1", Description: "Find auth code", Agent: "explore", Status: task.StatusCompleted,
			StartedAt: 1000, CompletedAt: 5000, Result: "found it", Progress: task.Progress{ToolCalls: 3, LastTools: []string{"read", "grep"}}},
		{ID: "ses_b", ParentSessionID: "ses_p", BatchID: "b1", Description: "Map the API routes", Agent: "explore", Status: task.StatusRunning,
			StartedAt: 2000, Progress: task.Progress{ToolCalls: 2, LastTools: []string{"glob"}}},
		{ID: "ses_c", ParentSessionID: "ses_p", BatchID: "b2", Description: "Fix AUTH bug", Agent: "general", Status: task.StatusError,
			StartedAt: 3000, CompletedAt: 4000, Error: &task.TaskError{Name: "ProviderError", Message: "rate limited"}, Progress: task.Progress{ToolCalls: 1}},
		{ID: "ses_d", ParentSessionID: "ses_p", BatchID: "b2", Description: "Write docs", Agent: "general", Status: task.StatusCancelled,
			StartedAt: 4000, CompletedAt: 4500, CancelReason: "not needed"},
		{ID: "ses_e", ParentSessionID: "ses_p", BatchID: "b3", Description: "Review auth flow", Agent: "reviewer", Status: task.StatusResumed,
			StartedAt: 5000, ResumeCount: 1, IsForked: true, Progress: task.Progress{ToolCalls: 4}},
	}
}

// Now is the time the fixtures are read at.
const Now = 10_000

// APIConfig is the status API's options the tests run with.
var APIConfig = config.APIConfig{Token: "s3cret", StartedAt: 4000, Version: "9.9.9"}

// Decode reads an answer's JSON body.
func Decode(t testing.TB, body string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &m), "body: %s", body)
	return m
}

// ListIDs is the IDs of a task list's answer, in its order.
func ListIDs(t testing.TB, body string) []string {
	t.Helper()
	var l struct {
		Tasks []task.Task `json:"tasks"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &l))
	ids := []string{}
	for _, x := range l.Tasks {
		ids = append(ids, x.ID)
	}
	return ids
}

// ManyTasks is n tasks of every status, agent and batch, as a busy store holds them.
func ManyTasks(n int) []task.Task {
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
