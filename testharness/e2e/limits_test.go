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

// A resume takes a start slot like a launch: with maxConcurrentStarts 1 held by another task,
// the resumed task waits (its answer says so, its record is queued) and its follow-up reaches
// the model only once that task has finished.
func TestResumeWaitsForAStartSlot(t *testing.T) {
	hold := newGate(t)
	var mu sync.Mutex
	var opened, followUpAt time.Time
	e := startWithOptions(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case firstUser(req) == "CHILD first" && req.LastUser == "FOLLOW UP":
			mu.Lock()
			followUpAt = req.Received
			mu.Unlock()
			return mockmodel.Reply{Text: "follow-up done"}
		case req.LastUser == "CHILD first":
			return mockmodel.Reply{Text: "first done"}
		case req.LastUser == "CHILD second":
			hold.wait(3 * time.Minute)
			return mockmodel.Reply{Text: "second done"}
		case req.LastUser == "FIRST" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("First", "CHILD first", "general")}}
		case req.LastUser == "SECOND" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Second", "CHILD second", "general")}}
		case req.LastUser == "RESUME" && lastRole(req) == "user":
			first := launchedIDs(req)[0]
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "asyncagents_task", Args: map[string]any{"resume": first, "prompt": "FOLLOW UP"}}}}
		}
		return mockmodel.Reply{Text: "ok"}
	}, map[string]any{"maxConcurrentStarts": 1})
	parent := e.prompt("FIRST")
	e.eventually("the first task's notice", 90*time.Second, func() bool { return len(e.notices(parent)) == 1 })
	first := idOf(e.toolParts(parent, "asyncagents_task")[0])
	e.waitIdle(parent)
	e.promptIn(parent, "SECOND")
	e.eventually("the second child at work", 60*time.Second, func() bool {
		for _, r := range e.model.Requests() {
			if r.LastUser == "CHILD second" {
				return true
			}
		}
		return false
	})
	e.waitIdle(parent)
	e.promptIn(parent, "RESUME")
	e.eventually("the resume's answer", 60*time.Second, func() bool {
		parts := e.toolParts(parent, "asyncagents_task")
		return len(parts) == 3 && finishedParts(parts)
	})
	answer := e.toolParts(parent, "asyncagents_task")[2].State.Output
	require.Contains(t, answer, "status: resumed")
	require.Contains(t, answer, "The follow-up waits for a start slot: position 1 in the queue of maxConcurrentStarts", answer)
	tk := storedTask(t, e.oc, first)
	require.Equal(t, task.StatusResumed, tk.Status)
	require.True(t, tk.Queued, "queued, with its session")

	mu.Lock()
	opened = time.Now()
	mu.Unlock()
	hold.open()
	e.eventually("the resume's notice", 90*time.Second, func() bool {
		for _, n := range e.notices(parent) {
			if strings.Contains(n.visible, "Resume #1") {
				return true
			}
		}
		return false
	})
	mu.Lock()
	defer mu.Unlock()
	require.False(t, followUpAt.IsZero())
	require.True(t, followUpAt.After(opened), "the follow-up waited for the slot: sent %s, slot freed after %s", followUpAt, opened)
	require.Equal(t, "follow-up done", storedTask(t, e.oc, first).Result)
}

// What a child spends through its own subagents (OpenCode's task tool) is the task's: its stored
// usage is the sum of the child's messages and the subagent's, which budgets are held to.
func TestUsageCountsTheChildsSubagents(t *testing.T) {
	model := mockmodel.Start(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case firstUser(req) == "SUB work":
			return mockmodel.Reply{Text: "sub done"}
		case firstUser(req) == "CHILD lead" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "task", Args: map[string]any{"description": "sub work", "prompt": "SUB work", "subagent_type": "general"}}}}
		case firstUser(req) == "CHILD lead":
			return mockmodel.Reply{Text: "lead done"}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "**Agent"):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "GO":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Lead", "CHILD lead", "orchestrator")}}
		}
		return mockmodel.Reply{Text: "?"}
	})
	oc := ocserve.Start(t, ocserve.Options{ModelURL: model.URL(), Config: map[string]any{
		"plugin":   []any{ocserve.PluginSpec(t)},
		"provider": pricedProvider(model.URL()),
		// The child is a subagent already: OpenCode's own limit must let it run one more.
		"subagent_depth": 3,
		"agent":          map[string]any{"orchestrator": map[string]any{"mode": "subagent", "description": "splits work", "permission": map[string]any{"task": "allow"}}},
	}})
	e := &env{t: t, model: model, oc: oc}
	parent := e.prompt("GO")
	e.eventually("the notice", 120*time.Second, func() bool { return len(e.notices(parent)) == 1 })
	id := idOf(e.toolParts(parent, "asyncagents_task")[0])
	child := e.sessionOf(id)
	calls := e.toolParts(child, "task")
	require.Len(t, calls, 1, "the child called OpenCode's task tool: %+v", e.messages(child))
	require.Equal(t, "completed", calls[0].State.Status, "%+v", calls[0].State)
	subs, err := e.oc.Children(e.ctx(10*time.Second), child)
	require.NoError(t, err)
	require.Len(t, subs, 1, "the child ran one subagent")

	sum := func(session string) (task.Tokens, float64) {
		tok, cost, _ := sessionUsage(t, e, session)
		return tok, cost
	}
	want, wantCost := sum(child)
	subTok, subCost := sum(subs[0].ID)
	require.Greater(t, subTok.Input, int64(0), "the subagent spent")
	want.Add(subTok)
	stored := storedTask(t, e.oc, id)
	require.NotNil(t, stored.Tokens)
	require.Equal(t, want, *stored.Tokens, "the child's messages and its subagent's")
	require.InDelta(t, wantCost+subCost, stored.Cost, 1e-12)
	require.Equal(t, 3, stored.Steps, "the child's two model calls and the subagent's one")
}
