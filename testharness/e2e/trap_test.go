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
