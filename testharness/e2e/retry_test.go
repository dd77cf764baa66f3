package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
)

// While OpenCode retries a child's model call that answered HTTP 500, the task says so in the
// status API (its view, and its row in the /tasks list the TUI draws); once the model answers,
// the retry is gone and the result arrives (issue 37).
func TestARetriedChildShowsRetrying(t *testing.T) {
	port := freeTCPPort(t)
	var failures atomic.Int32
	e := start(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD flaky":
			if failures.Add(1) <= 3 {
				body, _ := json.Marshal(map[string]any{"error": map[string]any{"message": "upstream exploded", "type": "server_error"}})
				// Each retry waits 2 s, long enough to be seen.
				return mockmodel.Reply{Status: 500, ErrorBody: string(body), Header: http.Header{"Retry-After-Ms": []string{"2000"}}}
			}
			return mockmodel.Reply{Text: "flaky result"}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "GO":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Flaky job", "CHILD flaky", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	}, fmt.Sprintf("ASYNCAGENTS_API_PORT=%d", port))
	parent := e.prompt("GO")
	var sj serverJSON
	e.eventually("server.json", 30*time.Second, func() bool {
		b, err := os.ReadFile(serverFileOf(storageOf(e.oc)))
		return err == nil && json.Unmarshal(b, &sj) == nil && sj.Port == port
	})
	e.eventually("the launch's answer", 60*time.Second, func() bool { return finishedParts(e.toolParts(parent, "asyncagents_task")) })
	id := idOf(e.toolParts(parent, "asyncagents_task")[0])

	var seen task.Task
	e.eventually("the task to show OpenCode's retry", 60*time.Second, func() bool {
		code, body := apiGet(t, sj.URL+"/v1/tasks/"+id, sj.Token, "")
		return code == 200 && json.Unmarshal([]byte(body), &seen) == nil && seen.View != nil && seen.View.Retry != ""
	})
	require.Regexp(t, `^retrying \(attempt \d\)`, seen.View.Retry)
	require.Contains(t, seen.View.Retry, "upstream exploded")
	require.Equal(t, task.StatusRunning, seen.Status)
	require.NotNil(t, seen.Retry)
	code, body := apiGet(t, sj.URL+"/v1/views/tasks", sj.Token, "")
	require.Equal(t, 200, code)
	require.Contains(t, body, `"note":"retrying (attempt `, "the /tasks row says it too")

	e.eventually("the notice", 90*time.Second, func() bool { return len(e.notices(parent)) == 1 })
	require.Contains(t, e.notices(parent)[0].hidden, "flaky result")
	code, body = apiGet(t, sj.URL+"/v1/tasks/"+id, sj.Token, "")
	require.Equal(t, 200, code)
	var done task.Task
	require.NoError(t, json.Unmarshal([]byte(body), &done))
	require.Equal(t, task.StatusCompleted, done.Status)
	require.Nil(t, done.Retry)
	require.Empty(t, done.View.Retry)
}
