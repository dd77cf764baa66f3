package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// The plugin in OpenCode's TUI, as users run it (in tmux, with tmux.enabled): the TUI runs its
// server and the plugins in a Worker of its own, and OpenCode 1.18.33 starts two instances of the
// project there at every launch, each loading the plugin. They share one core: one status API
// on the asked port, one notice per task. A running child gets its pane; quitting the TUI
// (ctrl+c) disposes the instances, which removes server.json and closes the pane.
func TestTUI(t *testing.T) {
	tm := startTmux(t)
	release := newGate(t)
	model := mockmodel.Start(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD wait":
			release.wait(2 * time.Minute)
			return mockmodel.Reply{Text: "waited"}
		case req.LastUser == "CHILD quick":
			return mockmodel.Reply{Text: "quick result"}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "GO quick":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Quick child", "CHILD quick", "general")}}
		case req.LastUser == "GO wait":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Waiting child", "CHILD wait", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	})
	port := freeTCPPort(t)
	oc := ocserve.StartTUI(t, ocserve.Options{
		ModelURL: model.URL(),
		Config:   map[string]any{"plugin": []any{[]any{ocserve.PluginSpec(t), map[string]any{"tmux": map[string]any{"enabled": true}}}}},
		Env:      []string{fmt.Sprintf("ASYNCAGENTS_API_PORT=%d", port)},
	}, tm.socket)
	isolatePanes(tm, oc)
	e := &env{t: t, model: model, oc: oc}

	// A task that finishes: its parent hears of it once, though two instances hear its events.
	quick := e.prompt("GO quick")
	e.eventually("the quick task's notice", 60*time.Second, func() bool { return len(e.notices(quick)) >= 1 })
	require.Contains(t, e.notices(quick)[0].hidden, "quick result")

	// A task still running when the TUI quits, with its pane.
	parent := e.prompt("GO wait")
	e.eventually("the launch answer", 60*time.Second, func() bool { return finishedParts(e.toolParts(parent, "asyncagents_task")) })
	child := e.sessionOf(idOf(e.toolParts(parent, "asyncagents_task")[0]))
	var pane string
	e.eventually("a pane attached to the child", 30*time.Second, func() bool {
		for id, cmd := range tm.panes() {
			if strings.Contains(cmd, "--session "+child) {
				pane = id
				return true
			}
		}
		return false
	})

	logs := oc.Logs()
	instances := strings.Count(logs, `message="creating instance"`)
	t.Logf("instances of the project: %d; cores: %d", instances, strings.Count(logs, "asyncagents: core loaded"))
	require.Equal(t, 1, strings.Count(logs, "asyncagents: core loaded (worker)"), "one core, in the plugin's Worker, however many instances")
	if instances > 1 {
		require.Contains(t, logs, "it shares the running core")
	}
	st := storageOf(oc)
	var sj serverJSON
	b, err := os.ReadFile(serverFileOf(st))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &sj))
	require.Equal(t, port, sj.Port, "one status API, on the asked port")
	code, body := apiGet(t, sj.URL+"/v1/tasks", sj.Token, "")
	require.Equal(t, 200, code, body)
	require.Contains(t, body, `"total":2`)
	require.Len(t, e.notices(quick), 1, "one notice per task")

	quit := time.Now()
	tm.run("send-keys", "-t", oc.Pane, "C-c")
	require.True(t, oc.WaitExit(20*time.Second), "the TUI quits on ctrl+c")
	t.Logf("the TUI quit in %s", time.Since(quit).Round(time.Millisecond))
	_, err = os.Stat(serverFileOf(st))
	require.True(t, os.IsNotExist(err), "server.json is removed when the TUI quits: %v", err)
	require.NotContains(t, tm.panes(), pane, "the child's pane closes when the TUI quits")
	// The dispose stops them, or the exit hooks do when OpenCode ends before its disposes have
	// written their lines (its log is its own, and a loaded machine can end the process first):
	// the last instance stops the core, the others leave it, never twice.
	logs = oc.Logs()
	stops, left := strings.Count(logs, "OpenCode disposed this instance; the core"), strings.Count(logs, "another one still uses the core")
	t.Logf("dispose lines: %d stopping the core, %d leaving it", stops, left)
	require.LessOrEqual(t, stops, 1, "the core stops once")
	require.LessOrEqual(t, left, instances-1)
}
