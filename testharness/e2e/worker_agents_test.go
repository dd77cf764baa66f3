package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
)

// A worker runs its own agents: w1's config adds "remote-only" and disables "explore", which the
// parent has. GET /v1/workers shows w1's agents once its stream is up; one turn then launches
// explore on w1, refused at the launch with w1's name and agents (no child anywhere), and
// remote-only on w1, which the parent does not have: it runs there and its result comes home.
func TestAWorkerRunsItsOwnAgentsAndRefusesOnesItLacks(t *testing.T) {
	call := func(desc, prompt, agent string) mockmodel.ToolCall {
		c := taskCall(desc, prompt, agent)
		c.Args["worker"] = "w1"
		return c
	}
	f := startFleet(t, childScript(map[string]func(mockmodel.Request) mockmodel.Reply{
		"CHILD explore": func(mockmodel.Request) mockmodel.Reply { return mockmodel.Reply{Text: "should never run"} },
		"CHILD remote":  func(mockmodel.Request) mockmodel.Reply { return mockmodel.Reply{Text: "result remote"} },
	}, map[string][]mockmodel.ToolCall{
		"LAUNCH": {call("Explore", "CHILD explore", "explore"), call("Remote", "CHILD remote", "remote-only")},
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
