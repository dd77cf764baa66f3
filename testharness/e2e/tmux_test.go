package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// tmuxServer is a tmux server on a private socket, killed when the test ends.
type tmuxServer struct {
	t      *testing.T
	socket string
}

func startTmux(t *testing.T) *tmuxServer {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is not installed: this test needs it (apt-get install tmux); it fails rather than skip, which would count as a pass")
	}
	s := &tmuxServer{t: t, socket: fmt.Sprintf("aa-e2e-%d-%d", os.Getpid(), time.Now().UnixNano())}
	s.run("-f", "/dev/null", "new-session", "-d", "-s", "oc", "-x", "220", "-y", "50")
	path := s.run("display", "-p", "#{socket_path}")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = exec.CommandContext(ctx, "tmux", "-L", s.socket, "kill-server").Run()
		_ = os.Remove(path) // tmux leaves its socket file behind
	})
	return s
}

// run runs one tmux command against the server (10 s at most) and returns its output, trimmed.
func (s *tmuxServer) run(args ...string) string {
	s.t.Helper()
	out, err := s.try(args...)
	require.NoError(s.t, err, "tmux %s: %s", strings.Join(args, " "), out)
	return out
}

func (s *tmuxServer) try(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "tmux", append([]string{"-L", s.socket}, args...)...).Output()
	if ee, ok := err.(*exec.ExitError); ok {
		return strings.TrimSpace(string(out) + string(ee.Stderr)), err
	}
	return strings.TrimSpace(string(out)), err
}

// panes maps each pane's ID to its start command.
func (s *tmuxServer) panes() map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(s.run("list-panes", "-a", "-F", "#{pane_id}\t#{pane_start_command}"), "\n") {
		id, cmd, _ := strings.Cut(line, "\t")
		out[id] = cmd
	}
	return out
}

// paneOf waits, at most bound, for the pane besides OpenCode's own (ocPane) that attaches to
// session child, and returns it with its command.
func (s *tmuxServer) paneOf(e *env, ocPane, child string, bound time.Duration) (pane, command string) {
	e.t.Helper()
	e.eventually("a pane attached to the child", bound, func() bool {
		for id, cmd := range s.panes() {
			if id != ocPane && strings.Contains(cmd, "--session "+child) {
				pane, command = id, cmd
				return true
			}
		}
		return false
	})
	e.t.Logf("pane %s: %s", pane, command)
	return pane, command
}

// isolatePanes gives the panes tmux opens from now on OpenCode's isolated home: they get the
// tmux server's environment, not OpenCode's.
func isolatePanes(tm *tmuxServer, oc *ocserve.Server) {
	for k, v := range map[string]string{
		"HOME": oc.Home, "XDG_CONFIG_HOME": filepath.Join(oc.Home, ".config"), "XDG_DATA_HOME": filepath.Join(oc.Home, ".local/share"),
		"XDG_CACHE_HOME": filepath.Join(oc.Home, ".cache"), "XDG_STATE_HOME": filepath.Join(oc.Home, ".local/state"),
		"OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1",
	} {
		tm.run("set-environment", "-g", k, v)
	}
}

// paneSetup is OpenCode inside a private tmux with tmux.enabled, one task launched whose child
// answers only once release is closed, and the pane attached to that child.
type paneSetup struct {
	*env
	tm            *tmuxServer
	ocPane, pane  string
	command       string
	parent, child string
	release       func()
}

func startPaneTask(t *testing.T) *paneSetup {
	tm := startTmux(t)
	ocPane := tm.run("display", "-p", "#{pane_id}")
	socketPath := tm.run("display", "-p", "#{socket_path}")
	serverPID := tm.run("display", "-p", "#{pid}")

	// The child answers only once the test has seen its pane, so the pane is checked while the
	// task runs however long the attach TUI takes to start.
	release := newGate(t)
	model := mockmodel.Start(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD watch me":
			release.wait(2 * time.Minute)
			return mockmodel.Reply{Text: "watched"}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "GO":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Pane child", "CHILD watch me", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	})
	oc := ocserve.Start(t, ocserve.Options{
		ModelURL: model.URL(),
		Config:   map[string]any{"plugin": []any{[]any{ocserve.PluginSpec(t), map[string]any{"tmux": map[string]any{"enabled": true}}}}},
		Env:      []string{"TMUX=" + socketPath + "," + serverPID + ",0", "TMUX_PANE=" + ocPane},
	})
	isolatePanes(tm, oc)
	e := &env{t: t, model: model, oc: oc}
	parent := e.prompt("GO")
	e.eventually("the launch answer", 60*time.Second, func() bool { return finishedParts(e.toolParts(parent, "asyncagents_task")) })
	child := e.sessionOf(idOf(e.toolParts(parent, "asyncagents_task")[0]))
	require.True(t, strings.HasPrefix(child, "ses_"), child)

	pane, command := tm.paneOf(e, ocPane, child, 30*time.Second)
	return &paneSetup{env: e, tm: tm, ocPane: ocPane, pane: pane, command: command, parent: parent, child: child, release: release.open}
}

// With tmux.enabled in the plugin options and OpenCode inside tmux ($TMUX, $TMUX_PANE), a running
// child gets a pane running `opencode attach <server> --session <task id>`: the real attach TUI
// renders the child's conversation there, and the pane closes when the task completes.
func TestTmuxPaneFollowsTask(t *testing.T) {
	s := startPaneTask(t)
	e, tm, pane := s.env, s.tm, s.pane
	require.Contains(t, s.command, ocserve.Binary(t)+" attach "+e.oc.URL, "the OpenCode binary running the plugin attaches to its server")
	require.Contains(t, s.command, "--dir "+e.oc.Dir)

	// The attach TUI shows the child's session: its prompt, and its title as the pane title.
	var screen string
	e.eventually("the attach TUI to show the child's prompt", 60*time.Second, func() bool {
		screen, _ = tm.try("capture-pane", "-p", "-t", pane)
		return strings.Contains(screen, "CHILD watch me")
	})
	t.Logf("pane %s shows:\n%s", pane, screen)
	e.eventually("the pane title to name the child session", 30*time.Second, func() bool {
		title, _ := tm.try("display", "-p", "-t", pane, "#{pane_title}")
		return strings.Contains(title, "Pane child")
	})
	dead, err := tm.try("display", "-p", "-t", pane, "#{pane_dead}")
	require.NoError(t, err)
	require.Equal(t, "0", dead, "the attach process is alive while the task runs")

	s.release()
	e.eventually("the notice", 60*time.Second, func() bool { return len(e.notices(s.parent)) == 1 })
	require.Contains(t, e.notices(s.parent)[0].hidden, "watched")
	e.eventually("the pane to close", 30*time.Second, func() bool {
		_, open := tm.panes()[pane]
		return !open
	})
	require.Contains(t, tm.panes(), s.ocPane, "OpenCode's own pane stays")
	require.Contains(t, e.oc.Logs(), fmt.Sprintf("tmux pane %s for", pane))
	require.NotContains(t, e.oc.Logs(), "no tmux pane")
}

// When OpenCode stops while a child still runs, the child's pane closes with it: a pane left
// behind would hold an attach TUI to a server that is gone.
func TestTmuxPaneClosesWhenOpenCodeStops(t *testing.T) {
	s := startPaneTask(t)
	e, tm := s.env, s.tm
	e.eventually("the attach TUI to show the child's prompt", 60*time.Second, func() bool {
		screen, _ := tm.try("capture-pane", "-p", "-t", s.pane)
		return strings.Contains(screen, "CHILD watch me")
	})
	require.NoError(t, e.oc.Stop(), "opencode must exit on SIGTERM within %s", ocserve.StopGrace)
	e.eventually("the pane to close", 20*time.Second, func() bool {
		_, open := tm.panes()[s.pane]
		return !open
	})
	require.Contains(t, tm.panes(), s.ocPane, "OpenCode's own pane stays")
}
