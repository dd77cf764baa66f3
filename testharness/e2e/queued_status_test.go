package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// A task waiting for a slot reads status "queued" in GET /v1/tasks and its own answer, and
// /v1/stats counts it as queued, not running; once it starts it reads running, then completed.
func TestAQueuedTaskReadsQueued(t *testing.T) {
	e, sj := startWithConfig(t, twoTasksScript(8*time.Second), map[string]any{"plugin": []any{[]any{ocserve.PluginSpec(t), map[string]any{"maxConcurrentStarts": 1}}}})
	parent := e.prompt("TWO")
	e.eventually("both launches answered", 60*time.Second, func() bool {
		parts := e.toolParts(parent, "asyncagents_task")
		return len(parts) == 2 && finishedParts(parts)
	})
	var queuedID string
	for _, p := range e.toolParts(parent, "asyncagents_task") {
		if strings.Contains(p.State.Output, "status: queued") {
			queuedID = idOf(p)
		}
	}
	require.NotEmpty(t, queuedID, "one of the two launches is queued")

	code, body := apiGet(t, sj.URL+"/v1/tasks", sj.Token, "")
	require.Equal(t, 200, code, body)
	var list struct {
		Tasks []struct{ ID, Status string }
	}
	require.NoError(t, json.Unmarshal([]byte(body), &list))
	statuses := map[string]string{}
	for _, tk := range list.Tasks {
		statuses[tk.ID] = tk.Status
	}
	require.Equal(t, "queued", statuses[queuedID], body)
	code, body = apiGet(t, sj.URL+"/v1/stats", sj.Token, "")
	require.Equal(t, 200, code, body)
	var stats struct{ ByStatus map[string]int }
	require.NoError(t, json.Unmarshal([]byte(body), &stats))
	require.Equal(t, 1, stats.ByStatus["queued"], body)
	require.Equal(t, 1, stats.ByStatus["running"], body)

	e.eventually("the queued task's end", 60*time.Second, func() bool {
		tk, ok := apiTask(t, sj, queuedID)
		return ok && tk.Status.Terminal()
	})
	tk, _ := apiTask(t, sj, queuedID)
	require.Equal(t, "second done", tk.Result)
	require.NotZero(t, tk.QueuedUntil, "it waited, then started")
}
