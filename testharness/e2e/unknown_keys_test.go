package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
)

// In real OpenCode a key asyncagents_task does not take is refused by name, with the keys it
// takes, and no child session is created: `budget: {dollars: 5}` used to run with no budget.
func TestUnknownArgumentKeysAreRefused(t *testing.T) {
	e := start(t, func(req mockmodel.Request) mockmodel.Reply {
		if lastRole(req) == "tool" {
			return mockmodel.Reply{Text: "understood"}
		}
		if req.LastUser == "BAD" {
			dollars := taskCall("Dollars", "CHILD x", "general")
			dollars.Args["budget"] = map[string]any{"dollars": 5}
			model := taskCall("Model", "CHILD x", "general")
			model.Args["model"] = "mock/mock-b"
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{dollars, model}}
		}
		return mockmodel.Reply{Text: "?"}
	})
	parent := e.prompt("BAD")
	e.eventually("the call answered", 60*time.Second, func() bool {
		return len(e.toolParts(parent, "asyncagents_task")) == 2 && finishedParts(e.toolParts(parent, "asyncagents_task"))
	})
	p := e.toolParts(parent, "asyncagents_task")[0]
	require.Equal(t, "error", p.State.Status)
	require.Contains(t, p.State.Error, `asyncagents_task: argument budget has no key "dollars"; its keys are steps, tokens, costUsd; no task was created`)
	p = e.toolParts(parent, "asyncagents_task")[1]
	require.Equal(t, "error", p.State.Status)
	require.Contains(t, p.State.Error, `asyncagents_task: unknown argument "model"; the arguments are description, prompt, agent, resume, fork, timeout, budget, isolation, worker; no task was created`)
	children, err := e.oc.Children(e.ctx(10*time.Second), parent)
	require.NoError(t, err)
	require.Empty(t, children)
}
