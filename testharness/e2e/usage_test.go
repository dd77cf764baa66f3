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

// A task's tokens and cost are what OpenCode recorded on its child's assistant messages, summed:
// here a step that ran a tool and the answer, on a model given a price so the cost is not 0. The
// history keeps them and the notice's usage block carries them.
func TestUsageIsTheSumOfTheChildsMessages(t *testing.T) {
	model := mockmodel.Start(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD count" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "bash", Args: map[string]any{"command": "echo counted", "description": "one step"}}}}
		case req.LastUser == "CHILD count":
			return mockmodel.Reply{Text: "counted everything"}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "GO":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Counter", "CHILD count", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	})
	oc := ocserve.Start(t, ocserve.Options{ModelURL: model.URL(), Config: map[string]any{
		"plugin":   []any{ocserve.PluginSpec(t)},
		"provider": pricedProvider(model.URL()),
	}})
	e := &env{t: t, model: model, oc: oc}
	parent := e.prompt("GO")
	e.eventually("the notice", 90*time.Second, func() bool { return len(e.notices(parent)) == 1 })
	e.eventually("the launch's answer", 30*time.Second, func() bool { return finishedParts(e.toolParts(parent, "asyncagents_task")) })
	taskID := idOf(e.toolParts(parent, "asyncagents_task")[0])

	want, wantCost, answers := sessionUsage(t, e, e.sessionOf(taskID))
	require.Equal(t, 2, answers, "the tool step and the answer")
	require.Greater(t, want.Input, int64(0), "the mock reports usage")
	require.Greater(t, wantCost, 0.0, "the priced model costs something")

	stored := storedTask(t, oc, taskID)
	require.Equal(t, task.StatusCompleted, stored.Status)
	require.NotNil(t, stored.Tokens)
	require.Equal(t, want, *stored.Tokens)
	require.InDelta(t, wantCost, stored.Cost, 1e-12)

	n := e.notices(parent)[0]
	require.Contains(t, n.hidden, fmt.Sprintf("<usage>\ninput_tokens: %d\noutput_tokens: %d\n", want.Input, want.Output))
	require.Contains(t, n.hidden, "tool_calls: 1\n")
}

// pricedProvider is the mock provider with a price on its models: OpenCode prices a model per
// million tokens, and the mock's own config prices it at 0.
func pricedProvider(url string) map[string]any {
	priced := map[string]any{"name": "Mock A", "tool_call": true, "temperature": true,
		"limit": map[string]any{"context": 200000, "output": 32000},
		"cost":  map[string]any{"input": 3, "output": 15, "cache_read": 0.3, "cache_write": 3.75}}
	return map[string]any{"mock": map[string]any{
		"npm":     "@ai-sdk/openai-compatible",
		"name":    "Mock",
		"options": map[string]any{"baseURL": url, "apiKey": "mock-key", "includeUsage": true},
		"models":  map[string]any{"mock-a": priced, "mock-b": priced},
	}}
}

// sessionUsage adds up what OpenCode recorded for a session's assistant messages: their tokens,
// their cost, and how many there are.
func sessionUsage(t *testing.T, e *env, session string) (task.Tokens, float64, int) {
	var tok task.Tokens
	var cost float64
	answers := 0
	for _, m := range e.messages(session) {
		if m.Info.Role != "assistant" {
			continue
		}
		var info struct {
			Tokens struct {
				Input, Output, Reasoning int64
				Cache                    struct{ Read, Write int64 }
			} `json:"tokens"`
			Cost float64 `json:"cost"`
		}
		require.NoError(t, json.Unmarshal(m.Info.Raw, &info))
		tok.Add(task.Tokens{Input: info.Tokens.Input, Output: info.Tokens.Output, Reasoning: info.Tokens.Reasoning,
			CacheRead: info.Tokens.Cache.Read, CacheWrite: info.Tokens.Cache.Write})
		cost += info.Cost
		answers++
	}
	return tok, cost, answers
}
