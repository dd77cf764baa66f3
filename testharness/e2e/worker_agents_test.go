package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// onW1 is a launch of agent on worker w1.
func onW1(desc, prompt, agent string) mockmodel.ToolCall {
	c := taskCall(desc, prompt, agent)
	c.Args["worker"] = "w1"
	return c
}

// A worker runs its own agents: w1's config adds "remote-only" and disables "explore", which the
// parent has. GET /v1/workers shows w1's agents once its stream is up; one turn then launches
// explore on w1, refused at the launch with w1's name and agents (no child anywhere), and
// remote-only on w1, which the parent does not have: it runs there and its result comes home.
func TestAWorkerRunsItsOwnAgentsAndRefusesOnesItLacks(t *testing.T) {
	f := startFleet(t, childScript(map[string]func(mockmodel.Request) mockmodel.Reply{
		"CHILD explore": func(mockmodel.Request) mockmodel.Reply { return mockmodel.Reply{Text: "should never run"} },
		"CHILD remote":  func(mockmodel.Request) mockmodel.Reply { return mockmodel.Reply{Text: "result remote"} },
	}, map[string][]mockmodel.ToolCall{
		"LAUNCH": {onW1("Explore", "CHILD explore", "explore"), onW1("Remote", "CHILD remote", "remote-only")},
	}), fleetOptions{workers: 1, workerConfig: map[string]any{"agent": map[string]any{
		"remote-only": map[string]any{"mode": "subagent", "description": "Only on the worker"},
		"explore":     map[string]any{"disable": true},
	}}})
	f.waitWorkersUp()
	var agents []string
	f.eventually("w1's agents in /v1/workers", 60*time.Second, func() bool {
		views, _ := f.workerViews()
		agents = views["w1"].Agents
		return len(agents) > 0
	})
	require.Contains(t, agents, "remote-only")
	require.NotContains(t, agents, "explore")

	parent := f.prompt("LAUNCH")
	var out []string
	f.eventually("both launches answered", 60*time.Second, func() bool {
		out = f.toolResults(parent, "asyncagents_task")
		return len(out) == 2
	})
	at := slices.IndexFunc(out, func(s string) bool { return strings.HasPrefix(s, "ERROR:") })
	require.GreaterOrEqual(t, at, 0, "one launch refused: %q", out)
	refused := out[at]
	require.Contains(t, refused, `worker w1 has no agent "explore"; its agents: `)
	require.Contains(t, refused, "remote-only")
	require.Contains(t, refused, "No task was created.")

	ids := f.launchedTasks(parent, 1)
	f.eventually("the remote-only task's notice", 90*time.Second, func() bool {
		return strings.Contains(f.noticeOf(parent, ids[0]), "result remote")
	})
	require.Equal(t, "w1", f.placeOf(ids[0]))
	tk, ok := findStoredTask(f.oc, ids[0])
	require.True(t, ok)
	require.Equal(t, "remote-only", tk.Agent)
	for _, r := range f.model.Turns() {
		require.NotEqual(t, "CHILD explore", firstUser(r), "the refused launch ran nowhere")
	}
}

// Agents added to a running worker's config are seen without restarting it: one through
// OpenCode's API (PATCH /global/config, which disposes every instance), one written in the
// clone's opencode.json and loaded by POST /instance/dispose. Each shows in GET /v1/workers once
// w1's OpenCode says it dropped its instance; one turn then launches both on w1, and both results
// come home, from the same worker process. The parent's config reaches w1's clone through a
// symlink, which OpenCode resolves in the dispose it tells of.
func TestAnAgentAddedToARunningWorkerRunsThere(t *testing.T) {
	sub := map[string]any{"mode": "subagent", "description": "Added while w1 runs"}
	f := startFleet(t, childScript(map[string]func(mockmodel.Request) mockmodel.Reply{
		"CHILD api":  func(mockmodel.Request) mockmodel.Reply { return mockmodel.Reply{Text: "result api"} },
		"CHILD file": func(mockmodel.Request) mockmodel.Reply { return mockmodel.Reply{Text: "result file"} },
	}, map[string][]mockmodel.ToolCall{
		"LAUNCH": {onW1("Api", "CHILD api", "api-added"), onW1("File", "CHILD file", "file-added")},
	}), fleetOptions{workers: 1, directory: func(_ string, w *ocserve.Server) string {
		link := filepath.Join(t.TempDir(), "w1-clone")
		require.NoError(t, os.Symlink(w.Dir, link))
		return link
	}})
	w1 := f.workers["w1"]
	pid := w1.PID()
	f.waitWorkersUp()
	w1Lists := func(agent string) func() bool {
		return func() bool {
			views, _ := f.workerViews()
			return slices.Contains(views["w1"].Agents, agent)
		}
	}
	f.eventually("w1's agents in /v1/workers", 60*time.Second, w1Lists("general"))
	require.False(t, w1Lists("api-added")())

	require.NoError(t, w1.Do(f.ctx(30*time.Second), "PATCH", "/global/config", map[string]any{"agent": map[string]any{"api-added": sub}}, nil))
	f.eventually("api-added in w1's agents", 60*time.Second, w1Lists("api-added"))

	cfgPath := filepath.Join(w1.Dir, "opencode.json")
	b, err := os.ReadFile(cfgPath)
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(b, &cfg))
	cfg["agent"] = map[string]any{"file-added": sub}
	b, err = json.Marshal(cfg)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cfgPath, b, 0o644))
	require.NoError(t, w1.Do(f.ctx(30*time.Second), "POST", "/instance/dispose", nil, nil))
	f.eventually("file-added in w1's agents", 60*time.Second, w1Lists("file-added"))

	parent := f.prompt("LAUNCH")
	ids := f.launchedTasks(parent, 2)
	var got []string
	f.eventually("both notices", 90*time.Second, func() bool {
		got = nil
		for _, id := range ids {
			n := f.noticeOf(parent, id)
			for _, want := range []string{"result api", "result file"} {
				if strings.Contains(n, want) {
					got = append(got, want)
				}
			}
		}
		return len(got) == 2
	})
	require.ElementsMatch(t, []string{"result api", "result file"}, got)
	for _, id := range ids {
		require.Equal(t, "w1", f.placeOf(id))
	}
	require.Equal(t, pid, w1.PID(), "w1 was not restarted")
}
