package e2e

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// authError is a provider error OpenCode does not retry on its own.
func authError(which string) mockmodel.Reply {
	return providerError(401, "invalid_api_key", "Incorrect API key provided for "+which+".")
}

// chainWith is chainOptions with the fallback options given.
func chainWith(fallback map[string]any) map[string]any {
	return map[string]any{"agents": chainOptions["agents"], "fallback": fallback}
}

// fallback.enabled false: A's provider error fails the task, and B is never asked.
func TestFallbackDisabled(t *testing.T) {
	var calledB atomic.Int32
	e := startWithOptions(t, parentScript(func(req mockmodel.Request) (mockmodel.Reply, bool) {
		if req.LastUser != "CHILD one" {
			return mockmodel.Reply{}, false
		}
		if modelOf(req) == ocserve.ModelB {
			calledB.Add(1)
			return mockmodel.Reply{Text: "B answered"}, true
		}
		return authError("A"), true
	}), chainWith(map[string]any{"enabled": false}))
	parent := e.prompt("GO one")
	e.eventually("the notice", 90*time.Second, func() bool { return len(e.notices(parent)) == 1 })
	require.Contains(t, e.notices(parent)[0].visible, `"Job one" failed`)
	id := idOf(e.toolParts(parent, "asyncagents_task")[0])
	var stored task.Task
	e.eventually("the failure in the history", 30*time.Second, func() bool {
		stored, _ = findStoredTask(e.oc, id)
		return stored.Status == task.StatusError
	})
	require.Equal(t, []string{ocserve.ModelA}, stored.Models)
	require.Len(t, stored.FallbackInfo.Attempts, 1)
	require.NotContains(t, stored.Error.Message, "All fallback models failed")
	require.Zero(t, calledB.Load())
}

// Every model of the chain fails: the error says so with each model's error, in the notice and
// in asyncagents_output.
func TestAllFallbackModelsFailed(t *testing.T) {
	var taskID string
	e := startWithOptions(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD doomed" && modelOf(req) == ocserve.ModelA:
			return authError("A")
		case req.LastUser == "CHILD doomed":
			return authError("B")
		// Only a user's turn launches: the turn after the tool's answer still has GO as its last
		// user message, and would launch again.
		case req.LastUser == "GO" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Doomed", "CHILD doomed", "general")}}
		case req.LastUser == "OUTPUT" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "asyncagents_output", Args: map[string]any{"task_id": taskID}}}}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "ok"}
		}
		return mockmodel.Reply{Text: "?"}
	}, chainOptions)
	parent := e.prompt("GO")
	e.eventually("the notice", 90*time.Second, func() bool { return len(e.notices(parent)) == 1 })
	e.waitIdle(parent)
	require.Len(t, e.toolParts(parent, "asyncagents_task"), 1, "one launch")
	taskID = idOf(e.toolParts(parent, "asyncagents_task")[0])
	var stored task.Task
	e.eventually("the failure in the history", 30*time.Second, func() bool {
		stored, _ = findStoredTask(e.oc, taskID)
		return stored.Status == task.StatusError
	})
	attempts := stored.FallbackInfo.Attempts
	require.Len(t, attempts, 2)
	want := fmt.Sprintf("All fallback models failed after 2 attempts. %s | %s", attempts[0].Error, attempts[1].Error)
	require.Contains(t, attempts[0].Error, "for A")
	require.Contains(t, attempts[1].Error, "for B")
	require.Equal(t, want, stored.Error.Message)
	n := e.notices(parent)[0]
	require.Contains(t, n.visible, `"Doomed" failed`)
	require.Contains(t, n.hidden, want)

	e.promptIn(parent, "OUTPUT")
	e.eventually("asyncagents_output answered", 60*time.Second, func() bool {
		return finishedParts(e.toolParts(parent, "asyncagents_output")) && len(e.toolParts(parent, "asyncagents_output")) == 1
	})
	out := e.toolParts(parent, "asyncagents_output")[0]
	require.Contains(t, out.State.Output+out.State.Error, want)
}

// fallback.cooldownMs 0 is no cooldown: with failureThreshold 1, A's failure on the first task
// would open its circuit for an hour by default; with 0 the second task starts on A again.
func TestCooldownZero(t *testing.T) {
	var calledA2 atomic.Int32
	e := startWithOptions(t, parentScript(func(req mockmodel.Request) (mockmodel.Reply, bool) {
		if !strings.HasPrefix(req.LastUser, "CHILD ") {
			return mockmodel.Reply{}, false
		}
		if modelOf(req) == ocserve.ModelA {
			if req.LastUser == "CHILD 2" {
				calledA2.Add(1)
			}
			return authError("A"), true
		}
		return mockmodel.Reply{Text: "B did " + req.LastUser}, true
	}), chainWith(map[string]any{"failureThreshold": 1, "cooldownMs": 0}))
	parent := e.prompt("GO 1")
	e.eventually("the first notice", 90*time.Second, func() bool { return len(e.notices(parent)) == 1 })
	e.waitIdle(parent)
	e.promptIn(parent, "GO 2")
	e.eventually("the second notice", 90*time.Second, func() bool { return len(e.notices(parent)) == 2 })
	parts := e.toolParts(parent, "asyncagents_task")
	stored := storedTask(t, e.oc, idOf(parts[len(parts)-1]))
	require.Equal(t, task.StatusCompleted, stored.Status)
	require.Empty(t, stored.FallbackInfo.Skipped, "A was not skipped")
	require.Equal(t, ocserve.ModelA, stored.FallbackInfo.Attempts[0].Model)
	require.Positive(t, calledA2.Load(), "the second task was tried on A")
}
