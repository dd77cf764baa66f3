// Package e2e drives the real `opencode serve` (the pinned opencode-ai binary) with the
// asyncagents plugin built into dist/ and the scripted mock model. Nothing here is faked: the
// plugin runs inside OpenCode's own Bun, the core inside the plugin as WebAssembly.
package e2e

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// env is one OpenCode with the plugin and one mock model.
type env struct {
	t     *testing.T
	model *mockmodel.Server
	oc    *ocserve.Server
}

func start(t *testing.T, script mockmodel.Script, extra ...string) *env {
	t.Helper()
	model := mockmodel.Start(t, script)
	oc := ocserve.Start(t, ocserve.Options{ModelURL: model.URL(), Plugins: []string{ocserve.PluginSpec(t)}, Env: extra})
	return &env{t: t, model: model, oc: oc}
}

func (e *env) ctx(d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	e.t.Cleanup(cancel)
	return ctx
}

// prompt opens a parent session on the build agent and sends it text.
func (e *env) prompt(text string) string {
	e.t.Helper()
	ctx := e.ctx(30 * time.Second)
	id, err := e.oc.CreateSession(ctx, "parent")
	require.NoError(e.t, err)
	require.NoError(e.t, e.oc.PromptAsync(ctx, id, "build", text))
	return id
}

// eventually polls cond every 200 ms until it holds or the bound passes.
func (e *env) eventually(what string, bound time.Duration, cond func() bool) {
	e.t.Helper()
	if !pollUntil(bound, cond) {
		e.t.Logf("opencode logs:\n%s", tail(e.oc.Logs(), 6000))
		e.t.Fatalf("timed out after %s waiting for %s", bound, what)
	}
}

// pollUntil asks cond every 200 ms until it holds (true) or bound passes (false).
func pollUntil(bound time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(bound); !cond(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// sessionOf waits until the task with taskID has its child session (created after the launch
// answered) and returns the session's ID.
func (e *env) sessionOf(taskID string) string {
	e.t.Helper()
	var ses string
	e.eventually("the child session of "+taskID, 30*time.Second, func() bool {
		t, _ := findStoredTask(e.oc, taskID)
		ses = t.SessionID
		return ses != ""
	})
	return ses
}

func (e *env) messages(sessionID string) []ocserve.Message {
	e.t.Helper()
	msgs, err := e.oc.Messages(e.ctx(15*time.Second), sessionID)
	require.NoError(e.t, err)
	return msgs
}

// notices are the task notices in the parent's user messages, one per task: the visible text and
// the synthetic part after it. Notices ready together for one parent arrive as one message, each
// its two parts in turn.
type notice struct {
	visible, hidden string
}

var noticeHead = regexp.MustCompile(`^(✓|✗|⊘) (\*\*)?(Agent "|Resume #|Interrupted: |Model failed: )`)

func (e *env) notices(parentID string) []notice {
	var out []notice
	for _, m := range e.messages(parentID) {
		if m.Info.Role != "user" {
			continue
		}
		var n *notice
		for _, p := range m.Parts {
			switch {
			case p.Type != "text":
			case !p.Synthetic && noticeHead.MatchString(p.Text):
				out = append(out, notice{visible: p.Text})
				n = &out[len(out)-1]
			case p.Synthetic && n != nil:
				n.hidden += p.Text
			}
		}
	}
	return out
}

// noticesOf counts the notices of task id in the parent.
func (e *env) noticesOf(parentID, id string) int {
	c := 0
	for _, n := range e.notices(parentID) {
		if strings.Contains(n.hidden, "task_id: "+id+"\n") {
			c++
		}
	}
	return c
}

// toolParts lists the parent's parts of one tool, in order.
func (e *env) toolParts(sessionID, tool string) []ocserve.Part {
	var out []ocserve.Part
	for _, m := range e.messages(sessionID) {
		for _, p := range m.Parts {
			if p.Type == "tool" && p.Tool == tool {
				out = append(out, p)
			}
		}
	}
	return out
}

func finishedParts(parts []ocserve.Part) bool {
	for _, p := range parts {
		if p.State.Status != "completed" && p.State.Status != "error" {
			return false
		}
	}
	return len(parts) > 0
}

// taskIDs reads the task IDs from the launch answers in the conversation the model sees.
var taskIDLine = regexp.MustCompile(`(?m)^task_id: (\S+)$`)

func launchedIDs(req mockmodel.Request) []string {
	var ids []string
	for _, m := range req.Messages {
		if m.Role == "tool" {
			if s := taskIDLine.FindStringSubmatch(m.Content); s != nil && strings.Contains(m.Content, "status: running") {
				ids = append(ids, s[1])
			}
		}
	}
	return ids
}

func lastRole(req mockmodel.Request) string {
	if len(req.Messages) == 0 {
		return ""
	}
	return req.Messages[len(req.Messages)-1].Role
}

func firstUser(req mockmodel.Request) string {
	for _, m := range req.Messages {
		if m.Role == "user" {
			return m.Content
		}
	}
	return ""
}

func taskCall(desc, prompt, agent string) mockmodel.ToolCall {
	return mockmodel.ToolCall{Name: "asyncagents_task", Args: map[string]any{"description": desc, "prompt": prompt, "agent": agent}}
}

// gate holds a mock child's answer until the test opens it (or bound passes), so a test can look
// at a task while it runs. It opens at the test's end at the latest; opening twice is harmless.
type gate struct {
	ch   chan struct{}
	once sync.Once
}

func newGate(t *testing.T) *gate {
	g := &gate{ch: make(chan struct{})}
	t.Cleanup(g.open)
	return g
}

func (g *gate) open() { g.once.Do(func() { close(g.ch) }) }

// wait blocks until the gate opens or bound passes.
func (g *gate) wait(bound time.Duration) {
	select {
	case <-g.ch:
	case <-time.After(bound):
	}
}
