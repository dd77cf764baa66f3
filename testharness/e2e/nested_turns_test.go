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

// A subagent that launched a task of its own and answered before that task ended: its turn waits
// for the task's notice, and its answer to it is what its parent gets (core/nested_turns.go).

// nestedScript serves a subagent whose first prompt is lead: it launches "CHILD nested" and
// answers "<lead> launched it"; the nested task answers "nested found 42" only once that answer
// was given; the subagent's answer to the notice is "<lead> saw 42". The user's session sends
// the lead with start (a tool call).
func nestedScript(lead string, start mockmodel.ToolCall) mockmodel.Script {
	gate := make(chan struct{})
	var opened sync.Once
	open := func() { opened.Do(func() { close(gate) }) }
	return func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case firstUser(req) == "CHILD nested" && lastRole(req) == "user":
			select { // answers once the lead has answered without it
			case <-gate:
			case <-time.After(60 * time.Second):
			}
			// and a while after: a lead not held would have ended with that answer by then.
			return mockmodel.Reply{Text: "nested found 42", Delay: 2 * time.Second}
		case firstUser(req) == lead && lastRole(req) == "user" && req.LastUser == lead:
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Nested", "CHILD nested", "general")}}
		case firstUser(req) == lead && strings.Contains(req.LastUser, "nested found 42"):
			return mockmodel.Reply{Text: lead + " saw 42"}
		case firstUser(req) == lead:
			open()
			return mockmodel.Reply{Text: lead + " launched it"}
		case req.LastUser == "NESTED" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{start}}
		}
		return mockmodel.Reply{Text: "ok"}
	}
}

// orchestrator is a subagent that may delegate; OpenCode's own subagent_depth must let a task's
// child (a subagent already) run one more.
var orchestratorConfig = map[string]any{
	"subagent_depth": 4,
	"agent": map[string]any{
		"orchestrator": map[string]any{"mode": "subagent", "description": "splits work", "permission": map[string]any{"task": "allow"}},
	},
}

func withPlugin(t *testing.T, config map[string]any) map[string]any {
	out := map[string]any{"plugin": []any{ocserve.PluginSpec(t)}}
	for k, v := range config {
		out[k] = v
	}
	return out
}

// A lead task's child: the lead does not end with "launched it" but with its answer to its own
// task's notice, and the user's session is told of the lead once, with that answer.
func TestALeadTaskEndsWithWhatItsOwnTaskFound(t *testing.T) {
	e, _ := startWithConfig(t, nestedScript("CHILD lead", taskCall("Lead", "CHILD lead", "orchestrator")), withPlugin(t, orchestratorConfig))
	parent := e.prompt("NESTED")
	lead := e.leadEnded(parent)
	tk := storedTask(t, e.oc, lead)
	require.Equal(t, task.StatusCompleted, tk.Status, "%+v", tk.Error)
	require.Equal(t, "CHILD lead saw 42", tk.Result, "the answer to its own task's notice, not the one before it")
	e.eventually("the lead's notice in the user's session", 30*time.Second, func() bool {
		return countVisible(e, parent, "CHILD lead saw 42") == 1
	})
	require.Zero(t, countVisible(e, parent, "CHILD lead launched it"), "the answer before is no result")
}

// A subagent of the user's session, run by OpenCode's own task tool: the tool's result is the
// subagent's answer to its task's notice.
func TestANativeSubagentAnswersWithWhatItsTaskFound(t *testing.T) {
	start := mockmodel.ToolCall{Name: "task", Args: map[string]any{"description": "sub lead", "prompt": "SUB lead", "subagent_type": "orchestrator"}}
	e, _ := startWithConfig(t, nestedScript("SUB lead", start), withPlugin(t, orchestratorConfig))
	parent := e.prompt("NESTED")
	var out string
	e.eventually("the native task tool's result", 90*time.Second, func() bool {
		for _, p := range e.toolParts(parent, "task") {
			if p.State.Status == "completed" || p.State.Status == "error" {
				out = p.State.Output + p.State.Error
				return true
			}
		}
		return false
	})
	require.Contains(t, out, "SUB lead saw 42", "the subagent's answer to its task's notice")
	require.NotContains(t, out, "SUB lead launched it")
}

// leadEnded waits for the parent's first launch to end and returns its task ID.
func (e *env) leadEnded(parent string) string {
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
	return lead
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

// Under maxConcurrentStarts 1 the lead holds the only slot when its child launches: the held
// lead gives it to its own task, which could otherwise never start, and gets it back after.
func TestALeadOnTheOnlySlotGivesItToItsOwnTask(t *testing.T) {
	config := withPlugin(t, orchestratorConfig)
	e, _ := startServing(t, nestedScript("CHILD lead", taskCall("Lead", "CHILD lead", "orchestrator")), ocserve.Options{
		Config: config, Files: map[string]string{".opencode/asyncagents.json": `{"maxConcurrentStarts": 1}`},
	})
	parent := e.prompt("NESTED")
	lead := e.leadEnded(parent)
	require.Equal(t, "CHILD lead saw 42", storedTask(t, e.oc, lead).Result)
}
