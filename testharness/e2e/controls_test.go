package e2e

import (
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// The controls in a real OpenCode: an interrupted parent turn stops its tasks, a model's
// concurrency limit queues them, and a budget stops a runaway child.

// Interrupting a parent's turn (POST /session/:id/abort, what Esc does in the TUI) cancels its
// running and queued tasks: their children go idle, each task keeps its status in the history,
// and the parent gets one ⊘ line without a model turn. The queued task never starts: the slots
// the cancels free are not given to it (the parent gets two child sessions, not a third that is
// deleted again). Another parent whose turn simply ended keeps its task running to completion.
func TestParentAbortCancelsItsTasks(t *testing.T) {
	script := func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case strings.HasPrefix(req.LastUser, "CHILD slow"):
			return mockmodel.Reply{Text: "never", Delay: 5 * time.Minute}
		case req.LastUser == "CHILD calm":
			return mockmodel.Reply{Text: "calm done", Delay: 15 * time.Second} // holds its slot past the abort
		case strings.Contains(req.LastUser, "Agent \"") || strings.Contains(req.LastUser, "Interrupted"):
			return mockmodel.Reply{Text: "ok"}
		case firstUser(req) == "DOOMED" && lastRole(req) == "tool":
			return mockmodel.Reply{Text: "thinking hard", Delay: 5 * time.Minute} // busy until aborted
		case req.LastUser == "DOOMED":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Slow 1", "CHILD slow1", "general"), taskCall("Slow 2", "CHILD slow2", "general"), taskCall("Slow 3", "CHILD slow3", "general")}}
		case lastRole(req) == "tool":
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "CALM":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Calm", "CHILD calm", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	}
	// Three slots: two of DOOMED's tasks run, the third waits behind them and CALM's.
	e := startWithOptions(t, script, map[string]any{"maxConcurrentStarts": 3})
	rec := e.oc.Record(t)
	calm := e.prompt("CALM")
	e.eventually("the calm launch", 60*time.Second, func() bool { return finishedParts(e.toolParts(calm, "asyncagents_task")) })
	doomed := e.prompt("DOOMED")
	e.eventually("three launches", 60*time.Second, func() bool {
		parts := e.toolParts(doomed, "asyncagents_task")
		return len(parts) == 3 && finishedParts(parts)
	})
	var ids []string
	for _, p := range e.toolParts(doomed, "asyncagents_task") {
		ids = append(ids, idOf(p))
	}
	var running []string
	e.eventually("two children at work and the parent still busy", 60*time.Second, func() bool {
		st, err := e.oc.Status(e.ctx(10 * time.Second))
		require.NoError(t, err)
		running = running[:0]
		for _, id := range ids {
			if tk, _ := findStoredTask(e.oc, id); tk.SessionID != "" && st[tk.SessionID] != "" {
				running = append(running, tk.SessionID)
			}
		}
		return len(running) == 2 && st[doomed] != "" && parentTurns(e.model, "DOOMED") >= 2
	})
	turnsBefore := parentTurns(e.model, "DOOMED")

	require.NoError(t, e.oc.Do(e.ctx(10*time.Second), "POST", "/session/"+doomed+"/abort", nil, nil))

	e.eventually("every task of the interrupted parent cancelled", 30*time.Second, func() bool {
		for _, id := range ids {
			if tk, _ := findStoredTask(e.oc, id); tk.Status != task.StatusCancelled {
				return false
			}
		}
		return true
	})
	e.eventually("the children idle", 30*time.Second, func() bool {
		st, err := e.oc.Status(e.ctx(10 * time.Second))
		require.NoError(t, err)
		return st[running[0]] == "" && st[running[1]] == ""
	})
	queued := 0
	for _, id := range ids {
		tk := storedTask(t, e.oc, id)
		require.Equal(t, "the parent's turn was interrupted", tk.CancelReason)
		if tk.SessionID == "" {
			queued++
		}
	}
	require.Equal(t, 1, queued, "the queued task was cancelled without ever starting")
	e.eventually("one ⊘ line", 30*time.Second, func() bool { return len(e.notices(doomed)) == 1 })
	n := e.notices(doomed)[0]
	require.Contains(t, n.visible, "⊘ Interrupted: 3 background tasks cancelled (")
	for _, id := range ids {
		require.Contains(t, n.hidden, id)
	}
	e.waitIdle(doomed)
	e.onlyTurnSince(doomed, "DOOMED", turnsBefore, "the line costs no model turn")
	require.Equal(t, 2, childSessionsCreated(rec, doomed), "only the two tasks that ran ever had a session")

	e.eventually("the calm parent's notice", 60*time.Second, func() bool { return len(e.notices(calm)) == 1 })
	require.Contains(t, e.notices(calm)[0].hidden, "calm done", "a turn that ended leaves its task running to completion")
}

// With concurrency.models {"mock/mock-a": 1}, three tasks on that model run one after another:
// the mock model never serves two of them at once, and while one runs the others have no
// session and say which limit they wait for.
func TestModelLimitQueues(t *testing.T) {
	const hold = 3 * time.Second
	var mu sync.Mutex
	var childAt []time.Time
	script := func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case strings.HasPrefix(req.LastUser, "CHILD "):
			mu.Lock()
			childAt = append(childAt, req.Received)
			mu.Unlock()
			return mockmodel.Reply{Text: "done " + req.LastUser, Delay: hold}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "THREE":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("One", "CHILD one", "general"), taskCall("Two", "CHILD two", "general"), taskCall("Three", "CHILD three", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	}
	e := startWithOptions(t, script, map[string]any{"concurrency": map[string]any{"models": map[string]any{ocserve.ModelA: 1}}})
	parent := e.prompt("THREE")
	e.eventually("three launches", 60*time.Second, func() bool {
		parts := e.toolParts(parent, "asyncagents_task")
		return len(parts) == 3 && finishedParts(parts)
	})
	var waiting []string
	for _, p := range e.toolParts(parent, "asyncagents_task") {
		if strings.Contains(p.State.Output, "status: queued") {
			require.Contains(t, p.State.Output, `in the queue of concurrency.models["mock/mock-a"], 1 at once`)
			waiting = append(waiting, idOf(p))
		}
	}
	require.Len(t, waiting, 2, "two of the three wait for the model's one slot")
	e.eventually("the first child at work", 30*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(childAt) == 1
	})
	children, err := e.oc.Children(e.ctx(10*time.Second), parent)
	require.NoError(t, err)
	require.Len(t, children, 1, "the waiting tasks have no session")
	for i, id := range waiting {
		tk := storedTask(t, e.oc, id)
		require.True(t, tk.Queued)
		require.NotNil(t, tk.Waiting)
		require.Equal(t, `concurrency.models["mock/mock-a"]`, tk.Waiting.Limit)
		require.Equal(t, i+1, tk.Waiting.Position)
	}

	e.eventually("three notices", 90*time.Second, func() bool { return len(e.notices(parent)) == 3 })
	mu.Lock()
	at := append([]time.Time(nil), childAt...)
	mu.Unlock()
	require.Len(t, at, 3)
	sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
	for i := 1; i < len(at); i++ {
		require.GreaterOrEqual(t, at[i].Sub(at[i-1]), hold-100*time.Millisecond, "child %d started while child %d was still answering", i+1, i)
	}
}

// A child that calls a tool on every step is stopped by its budget: with steps 3 it fails after
// 3 model calls (4 at most), with its partial work and the figures; a token budget stops one the
// same way; and past budget.sessionCostUsd a parent's next launch is refused with the figures.
func TestBudgetStopsARunawayChild(t *testing.T) {
	var mu sync.Mutex
	calls := map[string]int{}
	looping := func(req mockmodel.Request) (mockmodel.Reply, bool) {
		if !strings.HasPrefix(firstUser(req), "CHILD loop") {
			return mockmodel.Reply{}, false
		}
		mu.Lock()
		calls[firstUser(req)]++
		mu.Unlock()
		return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "bash", Args: map[string]any{"command": "echo again", "description": "loop"}}}}, true
	}
	budgeted := func(desc, prompt string, budget map[string]any) mockmodel.ToolCall {
		c := taskCall(desc, prompt, "general")
		c.Args["budget"] = budget
		return c
	}
	e := start(t, func(req mockmodel.Request) mockmodel.Reply {
		if r, ok := looping(req); ok {
			return r
		}
		switch {
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "STEPS":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{budgeted("Loop steps", "CHILD loop steps", map[string]any{"steps": 3})}}
		case req.LastUser == "TOKENS":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{budgeted("Loop tokens", "CHILD loop tokens", map[string]any{"tokens": 1})}}
		}
		return mockmodel.Reply{Text: "?"}
	})
	for _, c := range []struct{ prompt, child, want string }{
		{"STEPS", "CHILD loop steps", "budget exceeded: 3 steps (limit 3)"},
		{"TOKENS", "CHILD loop tokens", "tokens (limit 1)"},
	} {
		parent := e.prompt(c.prompt)
		e.eventually("the failure notice of "+c.prompt, 90*time.Second, func() bool { return len(e.notices(parent)) == 1 })
		n := e.notices(parent)[0]
		require.True(t, strings.HasPrefix(n.visible, "✗"), n.visible)
		require.Contains(t, n.hidden, c.want)
		require.Contains(t, n.hidden, "bash", "the partial work: the tools it ran")
		id := idOf(e.toolParts(parent, "asyncagents_task")[0])
		tk := storedTask(t, e.oc, id)
		require.Equal(t, task.StatusError, tk.Status)
		require.Equal(t, "BudgetExceeded", tk.Error.Name)
		require.NotNil(t, tk.Budget)
		e.waitIdle(tk.SessionID)
		mu.Lock()
		made := calls[c.child]
		mu.Unlock()
		limit := 3
		if c.prompt == "TOKENS" {
			limit = 1
		}
		require.GreaterOrEqual(t, made, limit, "%s: the child ran up to its budget", c.prompt)
		require.LessOrEqual(t, made, limit+1, "%s: one model call of overshoot at most", c.prompt)
	}
}

// Past budget.sessionCostUsd, the parent's next launch is refused with the figures, and no task
// is created for it.
func TestSessionCostBudgetRefusesALaunch(t *testing.T) {
	model := mockmodel.Start(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD pricey":
			return mockmodel.Reply{Text: "pricey done"}
		case strings.Contains(req.LastUser, "Agent \"") && lastRole(req) == "user":
			// Once: after the refused launch the tool's answer is last, and the turn ends.
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Again", "CHILD again", "general")}}
		case lastRole(req) == "tool":
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "PRICEY":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Pricey", "CHILD pricey", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	})
	oc := ocserve.Start(t, ocserve.Options{ModelURL: model.URL(), Config: map[string]any{
		"plugin":   []any{[]any{ocserve.PluginSpec(t), map[string]any{"budget": map[string]any{"sessionCostUsd": 0.000001}}}},
		"provider": pricedProvider(model.URL()),
	}})
	e := &env{t: t, model: model, oc: oc}
	parent := e.prompt("PRICEY")
	e.eventually("the second launch answered", 90*time.Second, func() bool {
		parts := e.toolParts(parent, "asyncagents_task")
		return len(parts) == 2 && finishedParts(parts)
	})
	e.waitIdle(parent)
	require.Len(t, e.toolParts(parent, "asyncagents_task"), 2, "the parent's turn ends after the refusal")
	second := e.toolParts(parent, "asyncagents_task")[1]
	require.Contains(t, second.State.Error, "past budget.sessionCostUsd ($0.0000); no task was created")
	require.Regexp(t, `have cost \$0\.\d{4}`, second.State.Error)
	for _, r := range model.Requests() {
		require.NotEqual(t, "CHILD again", r.LastUser, "the refused task never ran")
	}
}
