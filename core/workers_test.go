package core

import (
	"encoding/json"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// At start the core follows every worker, with how to reach it and never a password.
func TestStartFollowsEveryWorker(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	eff := h.run(Event{Type: EventStart})
	f := ofKind(eff, EffectWorkerFollow)
	require.Len(t, f, 2)
	require.Equal(t, "w1", f[0].Worker)
	require.Equal(t, &Remote{URL: "http://127.0.0.1:4101", Username: "opencode", PasswordEnv: "W1_PASSWORD"}, f[0].Remote)
	require.Equal(t, &Remote{URL: "https://w2.example:4096", Username: "bob", PasswordEnv: "W2_PASSWORD"}, f[1].Remote)
	require.False(t, f[0].Reply, "follow gets no reply")
	// Up asks the health, for the version.
	eff = h.state("w1", true, "")
	require.Len(t, ofKind(eff, EffectWorkerHealth), 1)
	require.Equal(t, "1.18.33", h.m.Workers()[0].Version)
	require.Equal(t, WorkerUp, h.m.Workers()[0].State)
	require.Equal(t, WorkerUnknown, h.m.Workers()[1].State)
}

// "auto" spreads a fan-out over the place with the most free slots, local first on a tie; a
// remote task's session effects go to its worker, with its directory there.
func TestAutoSpreadsOverPlaces(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	h.run(Event{Type: EventStart})
	h.state("w1", true, "")
	h.state("w2", true, "")
	var where []string
	for _, d := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		r, _ := h.launchOn(d, "auto")
		tk := h.taskOf(r)
		where = append(where, tk.Worker+map[bool]string{true: "(queued)", false: ""}[tk.Queued])
	}
	require.Equal(t, []string{"", "w1", "w2", "", "w1", "w2", "(queued)"}, where)
	creates := ofKind(h.effects, EffectSessionCreate)
	require.Len(t, creates, 6)
	require.Empty(t, creates[0].Worker)
	require.Nil(t, creates[0].Remote)
	require.Equal(t, "w1", creates[1].Worker)
	require.Equal(t, "/srv/w1/repo", creates[1].Directory)
	require.Equal(t, "W1_PASSWORD", creates[1].Remote.PasswordEnv)
	for _, p := range ofKind(h.effects, EffectPromptAsync) {
		tk := h.m.task(p.TaskID)
		require.Equal(t, tk.Worker, p.Worker, "the prompt goes where the task is")
	}
	require.Equal(t, 2, h.m.Workers()[0].Running)
}

// A worker whose stream is down takes no "auto" task.
func TestAutoSkipsADownWorker(t *testing.T) {
	h := newWK(t, twoWorkers(func(c *config.Config) { c.MaxConcurrentStarts = 1 }))
	h.state("w1", false, "connection refused")
	h.state("w2", true, "")
	r, _ := h.launchOn("a", "auto")
	require.Equal(t, "w2", h.taskOf(r).Worker)
	r, _ = h.launchOn("b", "auto")
	require.Equal(t, "", h.taskOf(r).Worker, "a tie goes to local")
	r, _ = h.launchOn("c", "auto")
	require.Equal(t, "w2", h.taskOf(r).Worker)
	r, _ = h.launchOn("d", "auto")
	require.Equal(t, "", h.taskOf(r).Worker, "w2 and local full, w1 down: local, queued")
	require.True(t, h.taskOf(r).Queued)
}

// A named worker not known up is checked first: unreachable fails the launch naming the worker
// and the reason, and creates nothing; reachable places the task there.
func TestNamedWorkerHealthBeforeLaunch(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	h.healthErr["w2"] = "connection refused"
	r, eff := h.launchOn("a", "w2")
	require.Equal(t, "asyncagents_task: worker w2 cannot be reached: connection refused; no task was created", r.Error)
	require.Empty(t, ofKind(eff, EffectSessionCreate))
	require.Empty(t, h.m.Tasks())
	r, _ = h.launchOn("b", "w1")
	require.Empty(t, r.Error)
	require.Equal(t, "w1", h.taskOf(r).Worker)
	require.Len(t, ofKind(h.effects, EffectWorkerHealth), 2)
	// Up: no check before the launch.
	h.state("w2", true, "")
	n := len(ofKind(h.effects, EffectWorkerHealth))
	delete(h.healthErr, "w2")
	r, _ = h.launchOn("c", "w2")
	require.Equal(t, "w2", h.taskOf(r).Worker)
	require.Len(t, ofKind(h.effects, EffectWorkerHealth), n)
}

// Placement refusals name what is wrong and create nothing.
func TestPlacementRefusals(t *testing.T) {
	h := newWK(t, twoWorkers(func(c *config.Config) {
		c.Agents = map[string]config.AgentModels{"general": {Worker: "w2"}}
	}))
	r, _ := h.launchOn("a", "w9")
	require.Equal(t, `asyncagents_task: unknown worker "w9": the configured workers are w1, w2; or use "auto" or "local"; no task was created`, r.Error)
	require.Empty(t, h.m.Tasks())
	h.state("w2", true, "")
	r, _ = h.launchOn("b", "")
	require.Equal(t, "w2", h.taskOf(r).Worker, "the agent's worker is the default")
	r, _ = h.launchOn("c", "local")
	require.Equal(t, "", h.taskOf(r).Worker, "the argument wins over the agent's")
	eff := h.run(Event{Type: EventToolCall, CallID: "call_r", Tool: ToolTask, SessionID: "ses_p", MessageID: "msg_p",
		Args: json.RawMessage(`{"prompt":"more","resume":"` + h.m.order[0] + `","worker":"w1"}`)})
	require.Equal(t, workerOnResume, ofKind(eff, EffectToolReply)[0].Error)
}

// Events of a worker's stream reach that worker's tasks only.
func TestWorkerEventsReachItsTasksOnly(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	h.state("w1", true, "")
	h.state("w2", true, "")
	r, _ := h.launchOn("a", "w1")
	tk := h.taskOf(r)
	h.answerOn("w2", tk.SessionID, "from the wrong worker")
	h.answerOn("", tk.SessionID, "from the local server")
	require.Equal(t, task.StatusRunning, tk.Status, "events of another stream change nothing")
	h.answerOn("w1", tk.SessionID, "done on w1")
	require.Equal(t, task.StatusCompleted, tk.Status)
	require.Equal(t, "done on w1", tk.Result)
	line := HistoryLine(tk.Task)
	require.Contains(t, line, `"worker":"w1"`)
	require.NotContains(t, line, "127.0.0.1", "the history keeps the worker's name, not its URL")
	noSecret(t, line)
}

// The poll asks the local OpenCode which children are busy only while a child runs there: with
// every running task on a worker, it asks the workers alone.
func TestPollAsksLocallyOnlyForLocalChildren(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	h.state("w1", true, "")
	h.launchOn("remote", "w1")
	statusAt := func(eff []Effect) (local, onW1 int) {
		for _, e := range ofKind(eff, EffectStatus) {
			if e.Worker == "" {
				local++
			} else if e.Worker == "w1" {
				onW1++
			}
		}
		return
	}
	local, onW1 := statusAt(h.run(Event{Type: EventTimer, TimerID: pollTimer}))
	require.Equal(t, 0, local, "no child runs locally")
	require.Equal(t, 1, onW1)
	h.launchOn("here", "local")
	local, onW1 = statusAt(h.run(Event{Type: EventTimer, TimerID: pollTimer}))
	require.Equal(t, 1, local)
	require.Equal(t, 1, onW1)
}
