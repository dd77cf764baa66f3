package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/testharness/browser"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// startAsking starts OpenCode with bash set to "ask" for the general agent, the plugin's status
// API on a free port, and returns once server.json names it.
func startAsking(t *testing.T, script mockmodel.Script) (*env, serverJSON) {
	t.Helper()
	return startWithConfig(t, script, map[string]any{
		"plugin": []any{ocserve.PluginSpec(t)},
		"agent":  map[string]any{"general": map[string]any{"permission": map[string]any{"bash": "ask"}}},
	})
}

// answerPermission posts the dashboard's answer, from the server's own Origin with the token.
func answerPermission(t *testing.T, sj serverJSON, taskID, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", sj.URL+"/v1/tasks/"+taskID+"/permission", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+sj.Token)
	req.Header.Set("Origin", sj.URL)
	c := &http.Client{Timeout: 10 * time.Second}
	res, err := c.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// With bash set to "ask" for the child's agent, the child's request reaches the parent as one
// line without a model turn and shows in the API; the user's "once" through the API lets the
// child run the command and finish, and a reject with a message lets it go on without.
func TestPermissionRequestReachesTheUser(t *testing.T) {
	e, sj := startAsking(t, func(req mockmodel.Request) mockmodel.Reply {
		child := firstUser(req)
		switch {
		case strings.HasPrefix(child, "CHILD ") && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "bash", Args: map[string]any{"command": "echo permitted-" + strings.TrimPrefix(child, "CHILD "), "description": "asks first"}}}}
		case strings.HasPrefix(child, "CHILD "):
			last := req.Messages[len(req.Messages)-1]
			return mockmodel.Reply{Text: "after bash: " + last.Content}
		case req.LastUser == "ONCE" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Allowed", "CHILD once", "general")}}
		case req.LastUser == "REJECT" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Refused", "CHILD reject", "general")}}
		}
		return mockmodel.Reply{Text: "ok"}
	})
	for _, c := range []struct {
		prompt, body, child string
		check               func(result string)
	}{
		{"ONCE", `{"reply":"once"}`, "once", func(result string) {
			require.Contains(t, result, "permitted-once", "the command ran")
		}},
		{"REJECT", `{"reply":"reject","message":"not on this machine"}`, "reject", func(result string) {
			require.NotContains(t, result, "after bash: permitted-reject", "the command did not run")
			require.Contains(t, result, "not on this machine", "the child read the reason and went on")
		}},
	} {
		parent := e.prompt(c.prompt)
		e.eventually("the launch", 60*time.Second, func() bool { return finishedParts(e.toolParts(parent, "asyncagents_task")) })
		id := idOf(e.toolParts(parent, "asyncagents_task")[0])
		var waiting *task.PermissionRequest
		e.eventually("the task marked waiting for permission", 60*time.Second, func() bool {
			code, body := apiGet(t, sj.URL+"/v1/tasks/"+id, sj.Token, "")
			var tk task.Task
			if code != 200 || json.Unmarshal([]byte(body), &tk) != nil {
				return false
			}
			waiting = tk.WaitingPermission()
			return waiting != nil
		})
		require.Equal(t, "bash", waiting.Permission)
		require.Equal(t, []string{"echo permitted-" + c.child}, waiting.Patterns)
		// The launch turn's own second request (after the tool's answer) may still be coming:
		// the turns are counted once it has ended.
		e.waitIdle(parent)
		turns := parentTurns(e.model, c.prompt)
		e.eventually("the parent's ⏸ line", 30*time.Second, func() bool {
			for _, m := range e.messages(parent) {
				for _, p := range m.Parts {
					if strings.HasPrefix(p.Text, "⏸ Agent ") && strings.Contains(p.Text, "waits for permission: bash echo permitted-"+c.child) {
						return true
					}
				}
			}
			return false
		})
		e.onlyTurnSince(parent, c.prompt, turns, "the line costs no model turn")

		code, body := answerPermission(t, sj, id, fmt.Sprintf(`{"requestId":%q,%s`, waiting.ID, strings.TrimPrefix(c.body, "{")))
		require.Equal(t, 202, code, body)
		e.eventually("the task's end", 60*time.Second, func() bool {
			tk, _ := findStoredTask(e.oc, id)
			return tk.Status.Terminal()
		})
		tk := storedTask(t, e.oc, id)
		require.Equal(t, task.StatusCompleted, tk.Status, "%+v", tk.Error)
		require.Nil(t, tk.WaitingPermission(), "permission.replied cleared the mark")
		c.check(tk.Result)
	}
	code, body := answerPermission(t, sj, "bg_nope", `{"requestId":"per_x","reply":"once"}`)
	require.Equal(t, 404, code, body)
}

// In the real browser: the task's page shows the request and its buttons, and "Allow once" lets
// the child run the command and finish.
func TestDashboardAnswersAPermission(t *testing.T) {
	e, sj := startAsking(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case firstUser(req) == "CHILD dashboard" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "bash", Args: map[string]any{"command": "echo permitted-dashboard", "description": "asks first"}}}}
		case firstUser(req) == "CHILD dashboard":
			return mockmodel.Reply{Text: "ran: " + req.Messages[len(req.Messages)-1].Content}
		case req.LastUser == "GO" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Asks first", "CHILD dashboard", "general")}}
		}
		return mockmodel.Reply{Text: "ok"}
	})
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	browser.Script(t, root, "permission.mjs", 3*time.Minute, func(line string) {
		if line == "ready" {
			e.prompt("GO")
		}
	}, "DASH_URL="+sj.URL, "DASH_TOKEN="+sj.Token, "DASH_SHOTS="+filepath.Join(root, "dist", "screenshots", "permission"))
}

// A request nobody answers within permission.timeoutMs is rejected by the plugin with a message
// telling the child to go on without it: the command does not run, the child reads why and
// finishes, and the task records the timeout.
func TestUnansweredPermissionTimesOut(t *testing.T) {
	e, _ := startWithConfig(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case firstUser(req) == "CHILD timeout" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "bash", Args: map[string]any{"command": "echo permitted-timeout", "description": "asks first"}}}}
		case firstUser(req) == "CHILD timeout":
			return mockmodel.Reply{Text: "after bash: " + req.Messages[len(req.Messages)-1].Content}
		case req.LastUser == "GO" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Nobody answers", "CHILD timeout", "general")}}
		}
		return mockmodel.Reply{Text: "ok"}
	}, map[string]any{
		"plugin": []any{[]any{ocserve.PluginSpec(t), map[string]any{"permission": map[string]any{"timeoutMs": 1500}}}},
		"agent":  map[string]any{"general": map[string]any{"permission": map[string]any{"bash": "ask"}}},
	})
	parent := e.prompt("GO")
	e.eventually("the launch", 60*time.Second, func() bool { return finishedParts(e.toolParts(parent, "asyncagents_task")) })
	id := idOf(e.toolParts(parent, "asyncagents_task")[0])
	e.eventually("the task's end", 60*time.Second, func() bool {
		tk, _ := findStoredTask(e.oc, id)
		return tk.Status.Terminal()
	})
	tk := storedTask(t, e.oc, id)
	require.Equal(t, task.StatusCompleted, tk.Status, "%+v", tk.Error)
	require.Len(t, tk.Permissions, 1)
	p := tk.Permissions[0]
	require.True(t, p.TimedOut, "%+v", p)
	require.Equal(t, "reject", p.Reply)
	require.GreaterOrEqual(t, p.RepliedAt-p.At, int64(1500), "not before the timeout")
	require.NotContains(t, tk.Result, "after bash: permitted-timeout", "the command did not run")
	require.Contains(t, tk.Result, "Nobody answered this permission request in time", "the child read why and went on")
}
