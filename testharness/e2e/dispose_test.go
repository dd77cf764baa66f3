package e2e

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
)

// OpenCode disposes a project's instance when it reloads it (POST /instance/dispose; the next
// request starts a new instance, with a new plugin) and when it ends, and calls the plugin's
// dispose hook. The disposed plugin stops everything it started: its status API lets go of the
// port (the new plugin binds the same one, not the next), its server.json goes, and its core stops.
// The new plugin restores the same history, and the parent hears of its task once. It runs with
// the core in the plugin's Worker and in OpenCode's own thread.
func TestDisposeStopsThePlugin(t *testing.T) {
	for _, c := range []struct{ name, env string }{{"worker", ""}, {"opencode thread", "ASYNCAGENTS_WORKER=false"}} {
		t.Run(c.name, func(t *testing.T) { disposeStopsThePlugin(t, c.env) })
	}
}

func disposeStopsThePlugin(t *testing.T, extraEnv string) {
	release := newGate(t)
	var extra []string
	if extraEnv != "" {
		extra = append(extra, extraEnv)
	}
	e, sj := startWithAPI(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD wait":
			release.wait(time.Minute)
			return mockmodel.Reply{Text: "child done"}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "GO":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Waiter", "CHILD wait", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	}, map[string]any{}, extra...)
	parent := e.prompt("GO")
	e.eventually("the launch answer", 60*time.Second, func() bool { return finishedParts(e.toolParts(parent, "asyncagents_task")) })
	child := idOf(e.toolParts(parent, "asyncagents_task")[0])
	childSession := e.sessionOf(child)
	// The parent's step ends first: OpenCode 1.18.33 can lose a project to a dispose that comes
	// mid-step (the step's config load, interrupted, stays in its cache and every later request
	// answers 503; docs/rationale/opencode.md). The child still runs, held by the gate.
	e.waitIdle(parent)

	require.NoError(t, e.oc.Do(e.ctx(30*time.Second), "POST", "/instance/dispose", nil, nil))
	e.eventually("the plugin's dispose", 30*time.Second, func() bool {
		return strings.Contains(e.oc.Logs(), "OpenCode disposed this instance")
	})

	// The next request for the project starts a new instance and plugin (OpenCode may already
	// have started one); its API answers on the port the disposed one let go of, with a token of
	// its own, and the old token is refused there.
	_, err := e.oc.CreateSession(e.ctx(30*time.Second), "after the reload")
	require.NoError(t, err)
	var now serverJSON
	e.eventually("the new plugin's server.json", 30*time.Second, func() bool {
		b, err := os.ReadFile(serverFileOf(storageOf(e.oc)))
		return err == nil && json.Unmarshal(b, &now) == nil && now.Token != "" && now.Token != sj.Token
	})
	require.Equal(t, sj.Port, now.Port, "the disposed plugin's server let go of its port")
	code, _ := apiGet(t, now.URL+"/v1/health", "", "")
	require.Equal(t, 200, code)
	code, _ = apiGet(t, now.URL+"/v1/tasks", sj.Token, "")
	require.Equal(t, 401, code, "only the new plugin answers on the port")
	e.eventually("the new plugin's core", 30*time.Second, func() bool { return strings.Count(e.oc.Logs(), "asyncagents: core loaded") == 2 })

	// The new plugin restored the task from the history.
	code, body := apiGet(t, now.URL+"/v1/tasks", now.Token, "")
	require.Equal(t, 200, code, body)
	var list struct {
		Tasks []struct{ ID, SessionID, Status string }
		Total int
	}
	require.NoError(t, json.Unmarshal([]byte(body), &list), body)
	require.Equal(t, 1, list.Total, body)
	require.Equal(t, child, list.Tasks[0].ID)
	require.Equal(t, childSession, list.Tasks[0].SessionID)

	// OpenCode aborts the child's run when it disposes the instance: the parent hears of its task
	// once, whichever plugin saw it end.
	release.open()
	e.eventually("the notice", 60*time.Second, func() bool { return len(e.notices(parent)) >= 1 })
	// A notice is sent in the step that ends its task, after that end is in the history: once the
	// history holds it ended and the parent is idle again, any second notice would be there.
	e.eventually("the task ended in the history", 30*time.Second, func() bool {
		task, ok := findStoredTask(e.oc, child)
		return ok && task.Status.Terminal()
	})
	e.waitIdle(parent)
	require.Len(t, e.notices(parent), 1)
	require.Equal(t, 2, strings.Count(e.oc.Logs(), "asyncagents: core loaded"), "one core per instance")
}
