package e2e

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// A lead task's child launches a task of its own and answers before it ends. The lead task does
// not end with that answer: the nested task's notice wakes the lead's child, whose answer to it is
// the lead's result, and the user's session is told of the lead once, with it.
func TestALeadTaskEndsWithWhatItsOwnTaskFound(t *testing.T) {
	gate := make(chan struct{})
	var opened sync.Once
	open := func() { opened.Do(func() { close(gate) }) }
	t.Cleanup(open)
	e, _ := startWithConfig(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case firstUser(req) == "CHILD nested" && lastRole(req) == "user":
			select { // answers once the lead's child has answered without it
			case <-gate:
			case <-time.After(60 * time.Second):
			}
			return mockmodel.Reply{Text: "nested found 42"}
		case firstUser(req) == "CHILD lead" && lastRole(req) == "user" && req.LastUser == "CHILD lead":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Nested", "CHILD nested", "general")}}
		case firstUser(req) == "CHILD lead" && strings.Contains(req.LastUser, "nested found 42"):
			return mockmodel.Reply{Text: "lead saw 42"}
		case firstUser(req) == "CHILD lead":
			open()
			return mockmodel.Reply{Text: "lead launched it"}
		case req.LastUser == "NESTRES" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Lead", "CHILD lead", "orchestrator")}}
		}
		return mockmodel.Reply{Text: "ok"}
	}, map[string]any{
		"plugin": []any{ocserve.PluginSpec(t)},
		"agent": map[string]any{
			"orchestrator": map[string]any{"mode": "subagent", "description": "splits work", "permission": map[string]any{"task": "allow"}},
		},
	})
	parent := e.prompt("NESTRES")
	lead := ""
	e.eventually("the lead's launch", 60*time.Second, func() bool {
		if parts := e.toolParts(parent, "asyncagents_task"); len(parts) > 0 {
			lead = idOf(parts[0])
		}
		return lead != ""
	})
	e.eventually("the lead's end", 90*time.Second, func() bool {
		tk, _ := findStoredTask(e.oc, lead)
		return tk.Status.Terminal()
	})
	tk := storedTask(t, e.oc, lead)
	require.Equal(t, task.StatusCompleted, tk.Status, "%+v", tk.Error)
	require.Equal(t, "lead saw 42", tk.Result, "the answer to its own task's notice, not the one before it")
	e.eventually("the lead's notice in the user's session", 30*time.Second, func() bool {
		return countVisible(e, parent, "lead saw 42") == 1
	})
	require.Zero(t, countVisible(e, parent, "lead launched it"), "the answer before is no result")
}

// countVisible counts the parts of session's messages whose text holds text.
func countVisible(e *env, session, text string) int {
	n := 0
	for _, m := range e.messages(session) {
		for _, p := range m.Parts {
			if strings.Contains(p.Text, text) {
				n++
			}
		}
	}
	return n
}
