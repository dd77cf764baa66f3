package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// trapPluginSpec is the plugin as built, with the module that traps on request in place of the
// shipped one (dist/test/asyncagents.wasm, built with -tags testtraps).
func trapPluginSpec(t *testing.T) string {
	t.Helper()
	dist := filepath.Dir(strings.TrimPrefix(ocserve.PluginSpec(t), "file://"))
	dir := t.TempDir()
	for from, to := range map[string]string{"asyncagents.js": "asyncagents.js", "asyncagents-worker.js": "asyncagents-worker.js", "test/asyncagents.wasm": "asyncagents.wasm"} {
		b, err := os.ReadFile(filepath.Join(dist, from))
		require.NoError(t, err, "run `make build` first")
		require.NoError(t, os.WriteFile(filepath.Join(dir, to), b, 0o644))
	}
	return "file://" + filepath.Join(dir, "asyncagents.js")
}

// The core traps once, in real OpenCode, while a child runs: that call fails with the core's
// words, and the child's notice still reaches the parent.
func TestATrapCostsOneCallInOpenCode(t *testing.T) {
	hold := newGate(t)
	model := mockmodel.Start(t, func(req mockmodel.Request) mockmodel.Reply {
		tools := 0
		for _, m := range req.Messages {
			if m.Role == "tool" {
				tools++
			}
		}
		switch {
		case req.LastUser == "CHILD slow":
			hold.wait(60 * time.Second)
			return mockmodel.Reply{Text: "slow result"}
		case strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "GO" && tools == 0:
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Slow job", "CHILD slow", "general")}}
		case req.LastUser == "GO" && tools == 1:
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "asyncagents_cancel", Args: map[string]any{"task_id": "asyncagents-test-trap:memory"}}}}
		}
		return mockmodel.Reply{Text: "ok"}
	})
	e := &env{t: t, model: model, oc: ocserve.Start(t, ocserve.Options{ModelURL: model.URL(), Plugins: []string{trapPluginSpec(t)}})}
	parent := e.prompt("GO")
	var trapped ocserve.Part
	e.eventually("the call that trapped to fail", 60*time.Second, func() bool {
		for _, p := range e.toolParts(parent, "asyncagents_cancel") {
			if p.State.Status == "error" {
				trapped = p
				return true
			}
		}
		return false
	})
	require.Contains(t, trapped.State.Error, "its core failed on this call")
	require.Contains(t, trapped.State.Error, "was restarted from the task history")
	require.Empty(t, e.notices(parent), "the child is still at work")

	hold.open()
	e.eventually("the child's notice", 60*time.Second, func() bool { return len(e.notices(parent)) == 1 })
	n := e.notices(parent)[0]
	require.Contains(t, n.visible, `"Slow job" finished`)
	require.Contains(t, n.hidden, "<task_result>\nslow result\n</task_result>")
	require.Contains(t, e.oc.Logs(), "the core trapped; making a new instance")
}

// The core traps while a child runs on worker w1: the worker's event stream stays open through
// the trap, so the new instance hears from the plugin's follower that w1 is up (no reconnect
// would tell it), GET /v1/workers says so, and the child's result still comes home from w1.
func TestATrapKeepsAWorkerUpAndItsTaskRunning(t *testing.T) {
	hold := newGate(t)
	f := startFleet(t, childScript(map[string]func(mockmodel.Request) mockmodel.Reply{
		"CHILD far": func(mockmodel.Request) mockmodel.Reply {
			hold.wait(90 * time.Second)
			return mockmodel.Reply{Text: "far result"}
		},
	}, map[string][]mockmodel.ToolCall{
		"LAUNCH": {onW1("Far job", "CHILD far", "general")},
		"TRAP":   {{Name: "asyncagents_cancel", Args: map[string]any{"task_id": "asyncagents-test-trap:memory"}}},
	}), fleetOptions{workers: 1, plugin: trapPluginSpec(t)})
	f.waitWorkersUp()
	parent := f.prompt("LAUNCH")
	ids := f.launchedTasks(parent, 1)
	f.eventually("the child at work on w1", 60*time.Second, func() bool { return f.placeOf(ids[0]) == "w1" })

	other := f.prompt("TRAP")
	f.eventually("the call that trapped to fail", 60*time.Second, func() bool {
		out := f.toolResults(other, "asyncagents_cancel")
		return len(out) == 1 && strings.Contains(out[0], "its core failed on this call")
	})
	f.eventually("w1 up in the new core's /v1/workers", 30*time.Second, func() bool {
		views, _ := f.workerViews()
		return views["w1"].State == "up"
	})

	hold.open()
	f.eventually("the child's notice", 90*time.Second, func() bool {
		return strings.Contains(f.noticeOf(parent, ids[0]), "far result")
	})
	require.Contains(t, f.oc.Logs(), "the core trapped; making a new instance")
}
