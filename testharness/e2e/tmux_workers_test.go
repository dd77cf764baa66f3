package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// remotePane is a fleet (a parent `opencode serve` with tmux.enabled inside a private tmux, and
// one worker w1) with one task placed on w1, and the pane attached to its child, which shows the
// child's prompt. The child writes streamedOnW1 and runs a tool once start is called, and
// answers "remote watched" once release is called.
type remotePane struct {
	*fleet
	tm                  *tmuxServer
	ocPane, pane        string
	command             string
	parent, task, child string
	w1                  *ocserve.Server
	start, release      func()
}

const streamedOnW1 = "STREAMED from the worker"

func startRemotePane(t *testing.T, call mockmodel.ToolCall, worker map[string]any) *remotePane {
	tm := startTmux(t)
	ocPane := tm.run("display", "-p", "#{pane_id}")
	socketPath := tm.run("display", "-p", "#{socket_path}")
	serverPID := tm.run("display", "-p", "#{pid}")
	start, release := newGate(t), newGate(t)
	model := mockmodel.Start(t, childScript(map[string]func(mockmodel.Request) mockmodel.Reply{
		"CHILD remote pane": func(r mockmodel.Request) mockmodel.Reply {
			if lastRole(r) != "tool" {
				start.wait(2 * time.Minute)
				return mockmodel.Reply{Text: streamedOnW1, ToolCalls: []mockmodel.ToolCall{{Name: "glob", Args: map[string]any{"pattern": "*.md"}}}}
			}
			release.wait(2 * time.Minute)
			return mockmodel.Reply{Text: "remote watched"}
		},
	}, map[string][]mockmodel.ToolCall{"LAUNCH": {call}}))
	fl := ocserve.StartFleet(t, ocserve.FleetOptions{
		Parent: ocserve.Options{ModelURL: model.URL(), Plugins: []string{ocserve.PluginSpec(t)}, Files: isolatedFiles,
			Env: []string{"TMUX=" + socketPath + "," + serverPID + ",0", "TMUX_PANE=" + ocPane}},
		Workers: 1, Worker: worker, Config: map[string]any{"tmux": map[string]any{"enabled": true}}})
	f := &fleet{env: &env{t: t, model: model, oc: fl.Parent}, workers: fl.Workers, names: fl.Names, opt: fl.Options}
	isolatePanes(tm, f.oc)
	// A password in tmux's own environment, which a pane gets unless the plugin passes the
	// worker's: the attach would then be refused (401) and show nothing of the child.
	tm.run("set-environment", "-g", "OPENCODE_SERVER_PASSWORD", "not-the-workers")
	f.waitWorkersUp()

	parent := f.prompt("LAUNCH")
	id := f.launchedTasks(parent, 1)[0]
	child := f.sessionOf(id)
	require.Equal(t, "w1", f.placeOf(id))
	pane, command := tm.paneOf(f.env, ocPane, child, 60*time.Second)
	s := &remotePane{fleet: f, tm: tm, ocPane: ocPane, pane: pane, command: command, parent: parent, task: id, child: child,
		w1: f.workers["w1"], start: start.open, release: release.open}
	t.Cleanup(func() {
		if t.Failed() {
			screen, _ := tm.try("capture-pane", "-p", "-t", pane)
			t.Logf("pane %s showed:\n%s", pane, screen)
		}
	})
	s.paneShows("the attach TUI to show the child's prompt", "CHILD remote pane")
	return s
}

// paneShows waits (bounded) until the pane's screen holds text, and returns the screen.
func (s *remotePane) paneShows(what, text string) string {
	s.t.Helper()
	var screen string
	s.eventually(what, 60*time.Second, func() bool {
		screen, _ = s.tm.try("capture-pane", "-p", "-t", s.pane)
		return strings.Contains(screen, text)
	})
	return screen
}

func (s *remotePane) paneClosed(within time.Duration) {
	s.t.Helper()
	s.eventually("the pane to close", within, func() bool {
		_, open := s.tm.panes()[s.pane]
		return !open
	})
	require.Contains(s.t, s.tm.panes(), s.ocPane, "OpenCode's own pane stays")
}

// An isolated task placed on worker w1 gets a pane running the real `opencode attach <w1>
// --session <child>` with w1's password and no --dir: the attach TUI follows the child's session
// on w1, in its worktree there (not the directory w1 serves), live: the text the child streams
// once the pane is up shows in it, with the session's title as the pane's. The pane closes when
// the task ends.
func TestTmuxPaneOfARemoteTask(t *testing.T) {
	call := isolatedCall("Remote pane", "CHILD remote pane")
	call.Args["worker"] = "w1"
	s := startRemotePane(t, call, nil)
	require.Contains(t, s.command, ocserve.Binary(t)+" attach "+s.w1.URL+" --session "+s.child)
	require.NotContains(t, s.command, "--dir", "the attach takes the session's directory")
	require.NotContains(t, s.command, s.oc.URL, "not the local server")
	info, err := s.w1.Session(s.ctx(15*time.Second), s.child)
	require.NoError(t, err)
	require.NotEqual(t, s.w1.Dir, info.Directory, "the child works in a worktree on w1")

	s.start()
	screen := s.paneShows("the attach TUI to show the text the child streams on w1", streamedOnW1)
	t.Logf("pane %s shows:\n%s", s.pane, screen)
	s.eventually("the pane title to name the child session", 30*time.Second, func() bool {
		title, _ := s.tm.try("display", "-p", "-t", s.pane, "#{pane_title}")
		return strings.Contains(title, "Remote pane")
	})

	s.release()
	s.eventually("the notice", 90*time.Second, func() bool { return len(s.notices(s.parent)) == 1 })
	require.Contains(t, s.notices(s.parent)[0].hidden, "remote watched")
	s.paneClosed(30 * time.Second)
	logs := s.oc.Logs()
	require.Contains(t, logs, "tmux pane "+s.pane+" for")
	require.Contains(t, logs, "("+s.child+") on worker w1")
	require.NotContains(t, logs, "no tmux pane")
	require.NotContains(t, logs, s.w1.Password())
}

// The worker is killed while its child works: the attach TUI keeps the child's last screen (it
// does not exit), the pane stays until the task fails at lostAfterMs, and closes with it.
func TestTmuxPaneOfALostWorker(t *testing.T) {
	const lostAfter = 8 * time.Second
	s := startRemotePane(t, remoteCall("Remote pane", "CHILD remote pane", "w1"), map[string]any{"lostAfterMs": lostAfter.Milliseconds()})
	s.start()
	s.paneShows("the attach TUI to show the text the child streams on w1", streamedOnW1)
	s.w1.Kill()
	killed := time.Now()
	var closedAfter time.Duration
	s.eventually("the pane to close", lostAfter+60*time.Second, func() bool {
		if _, open := s.tm.panes()[s.pane]; !open {
			closedAfter = time.Since(killed)
			return true
		}
		// Until then, the pane shows the child as it last was.
		if screen, err := s.tm.try("capture-pane", "-p", "-t", s.pane); err == nil {
			require.Contains(t, screen, streamedOnW1, "%s after the kill", time.Since(killed))
		}
		return false
	})
	t.Logf("the pane closed %s after the kill", closedAfter.Round(100*time.Millisecond))
	require.GreaterOrEqual(t, closedAfter, lostAfter, "the pane closes with the task, at lostAfterMs")
	s.eventually("the task to fail, naming w1", 60*time.Second, func() bool { return len(s.notices(s.parent)) == 1 })
	require.Contains(t, s.notices(s.parent)[0].hidden, "worker w1 was lost")
	require.Contains(t, s.tm.panes(), s.ocPane, "OpenCode's own pane stays")
}
