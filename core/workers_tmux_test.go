package core

import (
	"encoding/json"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// withTmux turns the panes on (enabled, and OpenCode inside tmux).
func withTmux(c *config.Config) { c.Tmux = config.TmuxConfig{Enabled: true, Inside: true} }

// A task on a worker gets its pane: tmux.open names the worker and how to reach it (the
// password's variable, never the password), and no directory (the attach TUI follows the
// session's own, and the worker's path means nothing here); the pane closes, on this machine (no
// worker), when the task ends.
func TestTmuxPaneOfARemoteTask(t *testing.T) {
	h := newWK(t, twoWorkers(withTmux))
	h.run(Event{Type: EventStart})
	h.state("w2", true, "")
	r, eff := h.launchOn("remote", "w2")
	tk := h.taskOf(r)
	open := ofKind(eff, EffectTmuxOpen)
	require.Len(t, open, 1)
	require.Equal(t, tk.SessionID, open[0].SessionID)
	require.Equal(t, "w2", open[0].Worker)
	require.Equal(t, &Remote{URL: "https://w2.example:4096", Username: "bob", PasswordEnv: "W2_PASSWORD"}, open[0].Remote)
	require.Empty(t, open[0].Directory)
	require.False(t, open[0].Reply)
	line, err := json.Marshal(open[0])
	require.NoError(t, err)
	noSecret(t, string(line))

	n := len(h.effects)
	h.answerOn("w2", tk.SessionID, "done")
	close := ofKind(h.effects[n:], EffectTmuxClose)
	require.Equal(t, task.StatusCompleted, tk.Status)
	require.Len(t, close, 1)
	require.Equal(t, tk.SessionID, close[0].SessionID)
	require.Empty(t, close[0].Worker, "the pane is on this machine")
	require.Nil(t, close[0].Remote)
}

// A local task's pane stays as it was: no worker, no directory (the plugin's own).
func TestTmuxPaneOfALocalTaskNamesNoWorker(t *testing.T) {
	h := newWK(t, twoWorkers(withTmux))
	h.run(Event{Type: EventStart})
	_, eff := h.launchOn("here", "local")
	open := ofKind(eff, EffectTmuxOpen)
	require.Len(t, open, 1)
	require.Empty(t, open[0].Worker)
	require.Nil(t, open[0].Remote)
	require.Empty(t, open[0].Directory)
}

// When the worker goes away, the pane stays (the attach shows its last screen) until the task
// fails at lostAfterMs, and then closes with it as a local task's does.
func TestTmuxPaneOfALostWorkerClosesWithTheTask(t *testing.T) {
	h, tk := upAndLaunch(t, withTmux)
	require.Len(t, ofKind(h.effects, EffectTmuxOpen), 1)
	eff := h.state("w1", false, "connection refused")
	require.Empty(t, ofKind(eff, EffectTmuxClose), "a worker down for less than lostAfterMs fails nothing")
	eff = h.run(Event{Type: EventTimer, TimerID: workerLostPrefix + "w1"})
	require.Equal(t, task.StatusError, tk.Status)
	close := ofKind(eff, EffectTmuxClose)
	require.Len(t, close, 1)
	require.Equal(t, tk.SessionID, close[0].SessionID)
}

// An isolated task on a worker gets its pane once its session exists in the worktree made there.
func TestTmuxPaneOfARemoteIsolatedTask(t *testing.T) {
	h := newWK(t, twoWorkers(withTmux))
	h.m = NewMachineWith(twoWorkers(withTmux), Setup{Project: wtProject, Worktrees: wtFolder})
	h.state("w1", true, "")
	_, eff := h.launchArgs("iso", `,"worker":"w1","isolation":"worktree"`)
	require.Empty(t, ofKind(eff, EffectTmuxOpen), "no pane before the session exists")
	_, eff = h.answerOne(eff, EffectWorkerWorktreeCreate, `{"directory":"/srv/w1/wt/bg","branch":"opencode/bg"}`, "")
	open := ofKind(eff, EffectTmuxOpen)
	require.Len(t, open, 1)
	require.Equal(t, "w1", open[0].Worker)
	require.Empty(t, open[0].Directory)
}
