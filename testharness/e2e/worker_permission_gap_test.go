package e2e

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
)

// A remote child asks for a permission while the parent's stream of its worker is cut (a proxy
// in front of the worker cuts it and refuses new ones; the child's requests go on). The stream
// carries no such question, so the parent does not know of it; once the stream is back, the
// parent reads the worker's pending requests, marks the task, and the user's "once" lets the
// child finish on the worker.
func TestWorkerPermissionAskedWhileItsStreamWasCutReachesTheUser(t *testing.T) {
	gate := make(chan struct{})
	var opened sync.Once
	open := func() { opened.Do(func() { close(gate) }) }
	t.Cleanup(open) // a failure before the gate opens leaves no model request waiting on it
	var asked atomic.Bool
	script := func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case firstUser(req) == "CHILD gated" && lastRole(req) == "user":
			asked.Store(true)
			select {
			case <-gate:
			case <-time.After(90 * time.Second):
			}
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "bash", Args: map[string]any{"command": "echo permitted-after-the-gap", "description": "asks first"}}}}
		case firstUser(req) == "CHILD gated":
			return mockmodel.Reply{Text: "after bash: " + req.Messages[len(req.Messages)-1].Content}
		case req.LastUser == "GO" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{remoteCall("Gated", "CHILD gated", "w1")}}
		}
		return mockmodel.Reply{Text: "ok"}
	}
	f, proxy := startGapFleet(t, script, map[string]any{
		"agent": map[string]any{"general": map[string]any{"permission": map[string]any{"bash": "ask"}}}})
	sj := f.api()
	parent := f.prompt("GO")
	id := f.launchedTasks(parent, 1)[0]
	f.eventually("the child's first model request, on w1", 60*time.Second, asked.Load)

	f.cutStream(proxy)
	open()
	var pending []struct {
		ID         string   `json:"id"`
		Permission string   `json:"permission"`
		Patterns   []string `json:"patterns"`
	}
	f.pendingOnW1("the request pending on w1", &pending, func() int { return len(pending) })
	tk := storedTask(t, f.oc, id)
	require.Nil(t, tk.WaitingPermission(), "the cut stream carried no question")
	require.Equal(t, task.StatusRunning, tk.Status)

	proxy.hold(false)
	var waiting *task.PermissionRequest
	f.eventually("the task marked waiting once the stream is back", 60*time.Second, func() bool {
		tk, _ := findStoredTask(f.oc, id)
		waiting = tk.WaitingPermission()
		return waiting != nil
	})
	require.Equal(t, pending[0].ID, waiting.ID)
	require.Equal(t, []string{"echo permitted-after-the-gap"}, waiting.Patterns)
	line := "waits for permission: bash echo permitted-after-the-gap"
	f.eventually("the ⏸ line in the parent's session", 60*time.Second, func() bool { return f.visibleLines(parent, line) > 0 })
	require.Equal(t, 1, f.visibleLines(parent, line), "the user is told once")
	code, body := answerPermission(t, sj, id, `{"requestId":"`+waiting.ID+`","reply":"once"}`)
	require.Equal(t, 202, code, body)
	f.eventually("the task's end", 60*time.Second, func() bool {
		tk, _ := findStoredTask(f.oc, id)
		return tk.Status.Terminal()
	})
	tk = storedTask(t, f.oc, id)
	require.Equal(t, task.StatusCompleted, tk.Status, "%+v", tk.Error)
	require.Contains(t, tk.Result, "permitted-after-the-gap", "the command ran on the worker")
	require.Nil(t, tk.WaitingPermission())
	f.eventually("one notice", 60*time.Second, func() bool { return f.noticesOf(parent, id) == 1 })
}

// visibleLines counts the parts of the parent's session the user sees that hold text.
func (e *env) visibleLines(sessionID, text string) int {
	n := 0
	for _, m := range e.messages(sessionID) {
		for _, p := range m.Parts {
			if p.Type == "text" && !p.Synthetic && strings.Contains(p.Text, text) {
				n++
			}
		}
	}
	return n
}

// The same gap, one level down: while the stream is cut, the remote child runs a subagent of its
// own (OpenCode's task tool), whose bash asks for permission. The parent saw neither the
// subagent's session made nor its question; once the stream is back, the worker's pending
// request names a session the parent does not know, which it traces up the worker's sessions to
// the task: the task is marked, and the user's "once" lets the subagent, then the child, finish.
func TestWorkerSubagentsPermissionAskedWhileTheStreamWasCutIsTracedToItsTask(t *testing.T) {
	gate := make(chan struct{})
	var opened sync.Once
	open := func() { opened.Do(func() { close(gate) }) }
	t.Cleanup(open)
	var asked atomic.Bool
	script := func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case firstUser(req) == "SUB asks" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "bash", Args: map[string]any{"command": "echo from-the-subagent", "description": "asks first"}}}}
		case firstUser(req) == "SUB asks":
			return mockmodel.Reply{Text: "sub: " + req.Messages[len(req.Messages)-1].Content}
		}
		return leadOnW1(req, "SUB asks", func() {
			asked.Store(true)
			select {
			case <-gate:
			case <-time.After(90 * time.Second):
			}
		})
	}
	f, proxy := startGapFleet(t, script, map[string]any{
		"subagent_depth": 3,
		"agent": map[string]any{
			"general": map[string]any{"permission": map[string]any{"bash": "ask"}},
			"orchestrator": map[string]any{"mode": "subagent", "description": "splits work",
				"permission": map[string]any{"task": "allow", "bash": "ask"}},
		}})
	sj := f.api()
	parent := f.prompt("GO")
	id := f.launchedTasks(parent, 1)[0]
	f.eventually("the child's first model request, on w1", 60*time.Second, asked.Load)
	f.cutStream(proxy)
	open()
	var pending []struct {
		ID        string `json:"id"`
		SessionID string `json:"sessionID"`
	}
	f.pendingOnW1("the subagent's request pending on w1", &pending, func() int { return len(pending) })
	tk := storedTask(t, f.oc, id)
	require.NotEqual(t, tk.SessionID, pending[0].SessionID, "the subagent's session asks, not the child's")
	require.Nil(t, tk.WaitingPermission())

	proxy.hold(false)
	var waiting *task.PermissionRequest
	f.eventually("the task marked waiting once the stream is back", 60*time.Second, func() bool {
		tk, _ := findStoredTask(f.oc, id)
		waiting = tk.WaitingPermission()
		return waiting != nil
	})
	require.Equal(t, pending[0].ID, waiting.ID)
	require.Equal(t, pending[0].SessionID, waiting.SessionID)
	code, body := answerPermission(t, sj, id, `{"requestId":"`+waiting.ID+`","reply":"once"}`)
	require.Equal(t, 202, code, body)
	f.eventually("the task's end", 90*time.Second, func() bool {
		tk, _ := findStoredTask(f.oc, id)
		return tk.Status.Terminal()
	})
	tk = storedTask(t, f.oc, id)
	require.Equal(t, task.StatusCompleted, tk.Status, "%+v", tk.Error)
	require.Contains(t, tk.Result, "from-the-subagent", "the subagent's command ran on the worker")
}

// cutStream has the proxy cut w1's event stream and waits until the parent sees w1 down.
func (f *fleet) cutStream(proxy *streamProxy) {
	f.t.Helper()
	proxy.hold(true)
	f.eventually("w1 down for the parent", 30*time.Second, func() bool {
		v, _ := f.workerViews()
		return v["w1"].State == core.WorkerDown
	})
}

// leadOnW1 answers the model requests of a lead task placed on w1 ("GO" launches it): its child,
// once before returns, runs OpenCode's task tool with prompt sub, and answers with what it said.
// Any other request gets "ok".
func leadOnW1(req mockmodel.Request, sub string, before func()) mockmodel.Reply {
	switch {
	case firstUser(req) == "CHILD leads" && lastRole(req) == "user":
		before()
		return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "task", Args: map[string]any{"description": strings.ToLower(sub), "prompt": sub, "subagent_type": "general"}}}}
	case firstUser(req) == "CHILD leads":
		return mockmodel.Reply{Text: "lead: " + req.Messages[len(req.Messages)-1].Content}
	case req.LastUser == "GO" && lastRole(req) == "user":
		c := taskCall("Leads", "CHILD leads", "orchestrator")
		c.Args["worker"] = "w1"
		return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{c}}
	}
	return mockmodel.Reply{Text: "ok"}
}

// pendingOnW1 waits until w1's own list of pending permission requests, read into into, holds
// exactly one.
func (f *fleet) pendingOnW1(what string, into any, n func() int) {
	f.t.Helper()
	f.eventually(what, 60*time.Second, func() bool {
		return f.workers["w1"].Do(f.ctx(10*time.Second), "GET", "/permission", nil, into) == nil && n() == 1
	})
}
