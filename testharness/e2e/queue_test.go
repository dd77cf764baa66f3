package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// With maxConcurrentStarts 1 (a plugin option in opencode.json), the second task of a batch is
// queued: it has its ID at once and no session (nothing idle waits in OpenCode) until the first task
// ends; then its session is created, its child runs and it completes.
func TestStartQueue(t *testing.T) {
	model := mockmodel.Start(t, twoTasksScript(5*time.Second))
	e, parent := launchTwoWithOneSlot(t, model)
	oc := e.oc
	var queuedID string
	for _, p := range e.toolParts(parent, "asyncagents_task") {
		if strings.Contains(p.State.Output, "status: queued") {
			queuedID = idOf(p)
		}
	}
	require.NotEmpty(t, queuedID, "one of the two launches is queued")
	require.Regexp(t, `^bg_`, queuedID)
	// The first child's session is created after its launch answered, so it may not exist yet;
	// once it does (its child then runs for 5 s), the queued task must still have none.
	var children []ocserve.SessionInfo
	e.eventually("the first task's session", 30*time.Second, func() bool {
		var err error
		children, err = oc.Children(e.ctx(10*time.Second), parent)
		return err == nil && len(children) > 0
	})
	require.Len(t, children, 1, "the queued task has no session while it waits")
	queued, _ := findStoredTask(oc, queuedID)
	require.True(t, queued.Queued)
	require.Empty(t, queued.SessionID, "no session while queued")
	for _, r := range model.Requests() {
		require.NotEqual(t, "CHILD second", r.LastUser, "the queued child's model was called while the first ran")
	}

	e.eventually("both notices", 60*time.Second, func() bool { return len(e.notices(parent)) == 2 })
	children, err := oc.Children(e.ctx(10*time.Second), parent)
	require.NoError(t, err)
	require.Len(t, children, 2, "the queued task got its session when it started")
	require.Contains(t, []string{children[0].ID, children[1].ID}, e.sessionOf(queuedID))
	require.Contains(t, e.notices(parent)[0].visible, `"First" finished`)
	require.Contains(t, e.notices(parent)[1].visible, `"Second" finished`)
	require.Contains(t, e.notices(parent)[1].hidden, "second done")
}

// launchTwoWithOneSlot starts OpenCode with maxConcurrentStarts 1 (a plugin option in
// opencode.json) and prompts a parent with "TWO", whose script launches two tasks; it returns when
// both launches have answered, the second one queued.
func launchTwoWithOneSlot(t *testing.T, model *mockmodel.Server) (*env, string) {
	oc := ocserve.Start(t, ocserve.Options{ModelURL: model.URL(), Config: map[string]any{
		"plugin": []any{[]any{ocserve.PluginSpec(t), map[string]any{"maxConcurrentStarts": 1}}},
	}})
	e := &env{t: t, model: model, oc: oc}
	parent := e.prompt("TWO")
	e.eventually("both launches answered", 60*time.Second, func() bool {
		parts := e.toolParts(parent, "asyncagents_task")
		return len(parts) == 2 && finishedParts(parts)
	})
	return e, parent
}

// Deleting the parent session cancels its running tasks (their children stop) and forgets them;
// another session's task is untouched and still completes.
func TestParentDeletedCancelsItsTasks(t *testing.T) {
	e := start(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD endless":
			return mockmodel.Reply{Text: "never", Delay: 5 * time.Minute}
		case req.LastUser == "CHILD other":
			return mockmodel.Reply{Text: "other done", Delay: 3 * time.Second}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "DOOMED":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Endless", "CHILD endless", "general")}}
		case req.LastUser == "OTHER":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Other", "CHILD other", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	})
	doomed := e.prompt("DOOMED")
	other := e.prompt("OTHER")
	e.eventually("both launched", 60*time.Second, func() bool {
		return finishedParts(e.toolParts(doomed, "asyncagents_task")) && finishedParts(e.toolParts(other, "asyncagents_task"))
	})
	child := e.sessionOf(idOf(e.toolParts(doomed, "asyncagents_task")[0]))
	e.eventually("the endless child to be busy", 30*time.Second, func() bool {
		st, err := e.oc.Status(e.ctx(10 * time.Second))
		require.NoError(t, err)
		return st[child] != ""
	})
	require.NoError(t, e.oc.Do(e.ctx(10*time.Second), "DELETE", "/session/"+doomed, nil, nil))

	e.eventually("the endless child stopped", 30*time.Second, func() bool {
		st, err := e.oc.Status(e.ctx(10 * time.Second))
		require.NoError(t, err)
		return st[child] == ""
	})
	e.eventually("the other session's notice", 60*time.Second, func() bool { return len(e.notices(other)) == 1 })
	require.Contains(t, e.notices(other)[0].hidden, "other done")
}

// A subagent whose agent has delegation rights (permission task: allow) is offered the
// delegation tools; one without them is not.
func TestDelegationRights(t *testing.T) {
	model := mockmodel.Start(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case strings.HasPrefix(req.LastUser, "CHILD "):
			return mockmodel.Reply{Text: "done"}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "GO":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Lead", "CHILD lead", "orchestrator"), taskCall("Leaf", "CHILD leaf", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	})
	oc := ocserve.Start(t, ocserve.Options{ModelURL: model.URL(), Plugins: []string{ocserve.PluginSpec(t)}, Config: map[string]any{
		"agent": map[string]any{"orchestrator": map[string]any{"mode": "subagent", "description": "splits work", "permission": map[string]any{"task": "allow"}}},
	}})
	e := &env{t: t, model: model, oc: oc}
	parent := e.prompt("GO")
	e.eventually("both notices", 60*time.Second, func() bool { return len(e.notices(parent)) == 2 })
	tools := map[string][]string{}
	for _, r := range model.Requests() {
		if strings.HasPrefix(r.LastUser, "CHILD ") {
			tools[r.LastUser] = r.Tools
		}
	}
	require.Contains(t, tools["CHILD lead"], "asyncagents_task")
	require.Contains(t, tools["CHILD lead"], "task")
	require.NotContains(t, tools["CHILD leaf"], "asyncagents_task")
	require.NotContains(t, tools["CHILD leaf"], "task")
	for _, name := range []string{"CHILD lead", "CHILD leaf"} {
		require.NotContains(t, tools[name], "todowrite")
		require.NotContains(t, tools[name], "question")
	}
}

// twoTasksScript launches "First" and "Second" on "TWO"; the first child answers after firstTakes
// (the window to look at the second while it waits), the second at once.
func twoTasksScript(firstTakes time.Duration) mockmodel.Script {
	return func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD first":
			return mockmodel.Reply{Text: "first done", Delay: firstTakes}
		case req.LastUser == "CHILD second":
			return mockmodel.Reply{Text: "second done"}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "TWO":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("First", "CHILD first", "general"), taskCall("Second", "CHILD second", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	}
}
