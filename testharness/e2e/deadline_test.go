package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// apiTask reads a task from the status API (false while it cannot).
func apiTask(t *testing.T, sj serverJSON, id string) (task.Task, bool) {
	code, body := apiGet(t, sj.URL+"/v1/tasks/"+id, sj.Token, "")
	var tk task.Task
	if code != 200 || json.Unmarshal([]byte(body), &tk) != nil {
		return task.Task{}, false
	}
	return tk, true
}

// launchOne prompts the parent with prompt and returns the ID of the task its turn launched.
func launchOne(e *env, prompt string) string {
	parent := e.prompt(prompt)
	e.eventually("the launch", 60*time.Second, func() bool { return finishedParts(e.toolParts(parent, "asyncagents_task")) })
	return idOf(e.toolParts(parent, "asyncagents_task")[0])
}

// timeout: 1 ends a silent child's task one second after its start, by its own timer: not at
// the next poll (pollIntervalMs is 3 s here, its default).
func TestATimeoutFiresAtItsTime(t *testing.T) {
	e, sj := startWithConfig(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case firstUser(req) == "CHILD silent":
			return mockmodel.Reply{Text: "never", Delay: stallLong}
		case req.LastUser == "GO" && lastRole(req) == "user":
			c := taskCall("Silent", "CHILD silent", "general")
			c.Args["timeout"] = 1
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{c}}
		}
		return mockmodel.Reply{Text: "ok"}
	}, map[string]any{"plugin": []any{ocserve.PluginSpec(t)}})
	id := launchOne(e, "GO")
	var tk task.Task
	e.eventually("the task's end", 60*time.Second, func() bool {
		got, ok := apiTask(t, sj, id)
		tk = got
		return ok && got.Status.Terminal()
	})
	require.Equal(t, task.StatusError, tk.Status)
	require.Equal(t, "Timeout", tk.Error.Name, "%+v", tk.Error)
	took := tk.CompletedAt - tk.StartedAt
	require.GreaterOrEqual(t, took, int64(1000), "not before its time")
	require.LessOrEqual(t, took, int64(1500), "ended within 1.5 s of its start (it took %d ms)", took)
}

// A task's timeout does not run while its child waits for the user: the user allows the command
// after the task's first deadline has passed, and the child runs it and finishes, not aborted.
func TestATimeoutWaitsWithThePermission(t *testing.T) {
	const timeoutS = 8
	e, sj := startAsking(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case firstUser(req) == "CHILD asks" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "bash", Args: map[string]any{"command": "echo permitted-late", "description": "asks first"}}}}
		case firstUser(req) == "CHILD asks":
			return mockmodel.Reply{Text: "after bash: " + req.Messages[len(req.Messages)-1].Content}
		case req.LastUser == "GO" && lastRole(req) == "user":
			c := taskCall("Asks late", "CHILD asks", "general")
			c.Args["timeout"] = timeoutS
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{c}}
		}
		return mockmodel.Reply{Text: "ok"}
	})
	id := launchOne(e, "GO")
	var tk task.Task
	e.eventually("the task waiting for permission", 60*time.Second, func() bool {
		got, ok := apiTask(t, sj, id)
		tk = got
		return ok && got.WaitingPermission() != nil
	})
	require.Equal(t, task.StatusRunning, tk.Status, "it asked before its deadline: %+v", tk.Error)
	firstDeadline := tk.StartedAt + timeoutS*1000
	// The answer must come after the first deadline: wait, bounded, for the clock to pass it.
	e.eventually("the first deadline to pass", 30*time.Second, func() bool {
		return time.Now().UnixMilli() > firstDeadline+500
	})
	got, _ := apiTask(t, sj, id)
	require.Equal(t, task.StatusRunning, got.Status, "still running while it waits: %+v", got.Error)
	code, body := answerPermission(t, sj, id, fmt.Sprintf(`{"requestId":%q,"reply":"once"}`, tk.WaitingPermission().ID))
	require.Equal(t, 202, code, body)
	e.eventually("the task's end", 60*time.Second, func() bool {
		got, ok := apiTask(t, sj, id)
		tk = got
		return ok && got.Status.Terminal()
	})
	require.Equal(t, task.StatusCompleted, tk.Status, "the allowed child was not aborted: %+v", tk.Error)
	require.True(t, strings.Contains(tk.Result, "permitted-late"), "the command ran: %q", tk.Result)
	require.Greater(t, tk.Permissions[0].RepliedAt, firstDeadline, "answered after the first deadline")
}
