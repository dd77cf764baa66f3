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

// pending lists a task's unanswered requests, oldest first.
func pending(tk task.Task) []task.PermissionRequest {
	var out []task.PermissionRequest
	for _, p := range tk.Permissions {
		if p.Reply == "" {
			out = append(out, p)
		}
	}
	return out
}

// toolOutputs joins what the tools answered in a conversation.
func toolOutputs(req mockmodel.Request) string {
	var b strings.Builder
	for _, m := range req.Messages {
		if m.Role == "tool" {
			b.WriteString(m.Content + "\n")
		}
	}
	return b.String()
}

// A child that asks twice at once (two commands in one step): each request is answered by its
// ID, whatever else is pending. An answer without the ID is refused, one for a request no longer
// pending is a 409 and sends nothing; the command allowed runs, the one rejected does not.
func TestTwoPendingRequestsAreAnsweredByID(t *testing.T) {
	e, sj := startAsking(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case firstUser(req) == "CHILD two" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{
				{Name: "bash", Args: map[string]any{"command": "echo first-ran", "description": "first"}},
				{Name: "bash", Args: map[string]any{"command": "echo second-ran", "description": "second"}},
			}}
		case firstUser(req) == "CHILD two":
			return mockmodel.Reply{Text: "tools said: " + toolOutputs(req)}
		case req.LastUser == "TWO" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Asks twice", "CHILD two", "general")}}
		}
		return mockmodel.Reply{Text: "ok"}
	})
	parent := e.prompt("TWO")
	e.eventually("the launch", 60*time.Second, func() bool { return finishedParts(e.toolParts(parent, "asyncagents_task")) })
	id := idOf(e.toolParts(parent, "asyncagents_task")[0])
	var asked []task.PermissionRequest
	e.eventually("two requests pending at once", 60*time.Second, func() bool {
		tk, ok := apiTask(t, sj, id)
		asked = pending(tk)
		return ok && len(asked) == 2
	})
	tk, _ := apiTask(t, sj, id)
	require.Equal(t, asked[1].ID, tk.View.PermissionID, "the page shows the newest request, with its ID")
	var first, second task.PermissionRequest
	for _, p := range asked {
		if strings.Contains(p.What(), "first-ran") {
			first = p
		} else {
			second = p
		}
	}
	require.NotEmpty(t, first.ID)
	require.NotEmpty(t, second.ID)

	code, body := answerPermission(t, sj, id, `{"reply":"always"}`)
	require.Equal(t, 400, code, body)
	require.Contains(t, body, "requestId is required")

	code, body = answerPermission(t, sj, id, fmt.Sprintf(`{"requestId":%q,"reply":"once"}`, first.ID))
	require.Equal(t, 202, code, body)
	e.eventually("the first request answered", 30*time.Second, func() bool {
		tk, _ := apiTask(t, sj, id)
		return len(pending(tk)) == 1 && pending(tk)[0].ID == second.ID
	})
	code, body = answerPermission(t, sj, id, fmt.Sprintf(`{"requestId":%q,"reply":"always"}`, first.ID))
	require.Equal(t, 409, code, "an answer to a request no longer pending: %s", body)
	require.Contains(t, body, "no longer pending")
	tk, _ = apiTask(t, sj, id)
	require.Len(t, pending(tk), 1, "the 409 answered nothing")

	code, body = answerPermission(t, sj, id, fmt.Sprintf(`{"requestId":%q,"reply":"reject","message":"not this one"}`, second.ID))
	require.Equal(t, 202, code, body)
	e.eventually("the task's end", 60*time.Second, func() bool {
		tk, _ := findStoredTask(e.oc, id)
		return tk.Status.Terminal()
	})
	done := storedTask(t, e.oc, id)
	require.Equal(t, task.StatusCompleted, done.Status, "%+v", done.Error)
	require.Contains(t, done.Result, "first-ran", "the command allowed ran")
	require.NotContains(t, done.Result, "second-ran\n", "the command rejected did not")
	for _, p := range done.Permissions {
		if p.ID == first.ID {
			require.Equal(t, "once", p.Reply, "the first request got its own answer, not the later always")
		}
	}
}

// A ⏸ line held while the parent is busy is dropped once its request was answered: the parent,
// idle again, never reads of a wait that is over; the task's end still reaches it.
func TestAnsweredRequestsLineIsNotSent(t *testing.T) {
	hold := newGate(t)
	e, sj := startAsking(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case firstUser(req) == "CHILD stale" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "bash", Args: map[string]any{"command": "echo stale-ran", "description": "asks"}}}}
		case firstUser(req) == "CHILD stale":
			return mockmodel.Reply{Text: "tools said: " + toolOutputs(req)}
		case req.LastUser == "STALE" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Asks while busy", "CHILD stale", "general")}}
		case firstUser(req) == "STALE" && lastRole(req) == "tool":
			hold.wait(3 * time.Minute) // the parent's turn goes on until the test opens the gate
			return mockmodel.Reply{Text: "done waiting"}
		}
		return mockmodel.Reply{Text: "ok"}
	})
	parent := e.prompt("STALE")
	e.eventually("the launch", 60*time.Second, func() bool { return finishedParts(e.toolParts(parent, "asyncagents_task")) })
	id := idOf(e.toolParts(parent, "asyncagents_task")[0])
	var asked *task.PermissionRequest
	e.eventually("the request pending", 60*time.Second, func() bool {
		tk, ok := apiTask(t, sj, id)
		asked = tk.WaitingPermission()
		return ok && asked != nil
	})
	st, err := e.oc.Status(e.ctx(10 * time.Second))
	require.NoError(t, err)
	require.NotEmpty(t, st[parent], "the parent is still busy: the ⏸ line is held")
	code, body := answerPermission(t, sj, id, fmt.Sprintf(`{"requestId":%q,"reply":"once"}`, asked.ID))
	require.Equal(t, 202, code, body)
	e.eventually("the task's end", 60*time.Second, func() bool {
		tk, _ := findStoredTask(e.oc, id)
		return tk.Status.Terminal()
	})
	hold.open()
	e.eventually("the task's notice", 60*time.Second, func() bool { return len(e.notices(parent)) == 1 })
	e.waitIdle(parent)
	for _, m := range e.messages(parent) {
		for _, p := range m.Parts {
			require.False(t, strings.HasPrefix(p.Text, "⏸"), "the answered request's line was sent: %q", p.Text)
		}
	}
}

// A nested task's request reaches the user's session (the session of the task that launched it,
// where a model reads it, has its turn held for the nested task: the line waits for it to be
// idle), and the API shows it for an answer.
func TestNestedTasksRequestReachesTheUser(t *testing.T) {
	e, sj := startWithConfig(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case firstUser(req) == "CHILD asker" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "bash", Args: map[string]any{"command": "echo nested-ran", "description": "asks"}}}}
		case firstUser(req) == "CHILD asker":
			return mockmodel.Reply{Text: "tools said: " + toolOutputs(req)}
		case firstUser(req) == "CHILD lead" && lastRole(req) == "user" && req.LastUser == "CHILD lead":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Nested asker", "CHILD asker", "general")}}
		case firstUser(req) == "CHILD lead" && strings.Contains(req.LastUser, "nested-ran"):
			return mockmodel.Reply{Text: "lead saw nested-ran"}
		case firstUser(req) == "CHILD lead":
			return mockmodel.Reply{Text: "lead launched it"}
		case req.LastUser == "NEST" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Lead", "CHILD lead", "orchestrator")}}
		}
		return mockmodel.Reply{Text: "ok"}
	}, map[string]any{
		"plugin": []any{ocserve.PluginSpec(t)},
		"agent": map[string]any{
			"general":      map[string]any{"permission": map[string]any{"bash": "ask"}},
			"orchestrator": map[string]any{"mode": "subagent", "description": "splits work", "permission": map[string]any{"task": "allow"}},
		},
	})
	parent := e.prompt("NEST")
	line := func(session string) bool {
		for _, m := range e.messages(session) {
			for _, p := range m.Parts {
				if strings.HasPrefix(p.Text, `⏸ Agent "Nested asker" waits for permission: bash echo nested-ran`) {
					return true
				}
			}
		}
		return false
	}
	e.eventually("the ⏸ line in the user's session", 90*time.Second, func() bool { return line(parent) })
	lead := idOf(e.toolParts(parent, "asyncagents_task")[0])
	var nested string
	var asked *task.PermissionRequest
	e.eventually("the nested task waiting in the API", 30*time.Second, func() bool {
		code, body := apiGet(t, sj.URL+"/v1/tasks?search=Nested", sj.Token, "")
		var page struct {
			Tasks []task.Task `json:"tasks"`
		}
		if code != 200 || json.Unmarshal([]byte(body), &page) != nil || len(page.Tasks) != 1 {
			return false
		}
		nested, asked = page.Tasks[0].ID, page.Tasks[0].WaitingPermission()
		return asked != nil
	})
	code, body := answerPermission(t, sj, nested, fmt.Sprintf(`{"requestId":%q,"reply":"once"}`, asked.ID))
	require.Equal(t, 202, code, body)
	e.eventually("the nested task's end", 60*time.Second, func() bool {
		tk, _ := findStoredTask(e.oc, nested)
		return tk.Status.Terminal()
	})
	require.Contains(t, storedTask(t, e.oc, nested).Result, "nested-ran")
	// The lead's child waited for it (core/nested_turns.go): the lead's result is its answer to
	// the nested task's notice.
	e.eventually("the lead's end", 60*time.Second, func() bool {
		tk, _ := findStoredTask(e.oc, lead)
		return tk.Status.Terminal()
	})
	require.Equal(t, "lead saw nested-ran", storedTask(t, e.oc, lead).Result)
}
