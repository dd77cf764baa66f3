package core

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/stretchr/testify/require"
)

// fire feeds a timer's firing at now (the harness's clock moved there first).
func (h *wkHarness) fire(timer string, now int64) []Effect {
	h.now = now - 10 // step adds its 10 ms
	return h.run(Event{Type: EventTimer, TimerID: timer})
}

// A worker rests restAfterMs after its last task of this parent left it (its stream is closed,
// its later states are not taken), a worker never used rests at the first heartbeat past it, and
// a resting worker's health is asked at each heartbeat.
func TestAnIdleWorkerRests(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	h.run(Event{Type: EventStart})
	start := h.now
	h.state("w1", true, "")
	h.state("w2", true, "")
	r, _ := h.launchOn("a", "w1")
	tk := h.taskOf(r)
	before := len(h.effects)
	h.answerOn("w1", tk.SessionID, "done")
	require.Equal(t, "completed", string(h.m.task(tk.ID).Status))
	var rest []Effect
	for _, e := range h.effects[before:] {
		if e.Kind == EffectTimerSet && strings.HasPrefix(e.TimerID, workerRestPrefix) {
			rest = append(rest, e)
		}
	}
	require.Len(t, rest, 1, "w1's last task left it: its rest timer starts, and only its")
	require.Equal(t, "worker.rest:w1", rest[0].TimerID)
	require.Equal(t, int64(config.DefaultWorkerRestAfterMs), rest[0].DelayMs)
	left := h.now

	eff := h.fire("worker.rest:w1", left+config.DefaultWorkerRestAfterMs)
	un := ofKind(eff, EffectWorkerUnfollow)
	require.Len(t, un, 1)
	require.Equal(t, "w1", un[0].Worker)
	require.Equal(t, "W1_PASSWORD", un[0].Remote.PasswordEnv)
	w1 := h.m.Workers()[0]
	require.Equal(t, WorkerResting, w1.State)
	require.Equal(t, WorkerReachable, w1.Health, "its stream was up when it rested")
	require.Equal(t, WorkerUp, h.m.Workers()[1].State, "w2 is not past its restAfterMs since the start yet")

	h.state("w1", false, "the event stream ended") // the closed stream's last word
	require.Equal(t, WorkerResting, h.m.Workers()[0].State, "a resting worker's stream states are not taken")

	eff = h.fire(HeartbeatTimer, start+config.DefaultWorkerRestAfterMs+30_000)
	require.Len(t, ofKind(eff, EffectWorkerUnfollow), 1, "w2, never used, rests at the heartbeat")
	require.Equal(t, "w2", ofKind(eff, EffectWorkerUnfollow)[0].Worker)
	asks := ofKind(eff, EffectWorkerHealth)
	require.Len(t, asks, 1, "the resting w1 has its health asked")
	require.Equal(t, "w1", asks[0].Worker)

	table, err := WorkersTable(h.m.workersBody(), h.now)
	require.NoError(t, err)
	require.Contains(t, table, "resting for ")
	require.Contains(t, table, ", reachable")
}

// A task placed on a resting worker follows it again: "auto" takes it after a health check, a
// resting worker whose check fails is passed over for the next place, and a named one fails the
// launch with its reason as before.
func TestATaskWakesARestingWorker(t *testing.T) {
	h := newWK(t, twoWorkers(func(c *config.Config) { c.MaxConcurrentStarts = 1 }))
	h.run(Event{Type: EventStart})
	h.state("w1", true, "")
	h.state("w2", true, "")
	h.fire(HeartbeatTimer, h.now+config.DefaultWorkerRestAfterMs+1)
	require.Equal(t, WorkerResting, h.m.Workers()[0].State)
	require.Equal(t, WorkerResting, h.m.Workers()[1].State)

	r, eff := h.launchOn("a", "auto")
	tk := h.taskOf(r)
	require.Equal(t, "w1", tk.Worker, "the most free slots, first in name order: a resting worker counts")
	require.Len(t, ofKind(eff, EffectWorkerHealth), 1, "asked before the task goes there")
	f := ofKind(eff, EffectWorkerFollow)
	require.Len(t, f, 1)
	require.Equal(t, "w1", f[0].Worker)
	require.NotNil(t, f[0].Follow)
	require.Equal(t, WorkerUnknown, h.m.Workers()[0].State)
	require.Len(t, ofKind(eff, EffectSessionCreate), 1)
	h.state("w1", true, "")
	require.Equal(t, WorkerUp, h.m.Workers()[0].State)

	h.healthErr["w2"] = "connection refused"
	r, eff = h.launchOn("b", "auto")
	require.Empty(t, h.taskOf(r).Worker, "w2 did not answer: the next place, local, takes it")
	require.Empty(t, ofKind(eff, EffectWorkerFollow))
	w2 := h.m.Workers()[1]
	require.Equal(t, WorkerResting, w2.State)
	require.Equal(t, WorkerUnreachable, w2.Health)
	require.Equal(t, "connection refused", w2.HealthError)

	r, _ = h.launchOn("c", "w2")
	require.True(t, strings.Contains(r.Error, "worker w2 cannot be reached: connection refused"), r.Error)
	require.Equal(t, WorkerResting, h.m.Workers()[1].State)
}

// A task that comes and goes while the rest timer runs moves the idle start: the timer, when it
// fires, rests nothing and runs again for what is left.
func TestARestWaitsForTheLastTaskToLeave(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	h.run(Event{Type: EventStart})
	h.state("w1", true, "")
	r, _ := h.launchOn("a", "w1")
	h.answerOn("w1", h.taskOf(r).SessionID, "done")
	first := h.now
	r, _ = h.launchOn("b", "w1")
	h.now = first + 30_000
	h.answerOn("w1", h.taskOf(r).SessionID, "done")
	second := h.m.workers["w1"].idleSince
	require.Greater(t, second, first+29_000, "the second task's end")
	eff := h.fire("worker.rest:w1", first+config.DefaultWorkerRestAfterMs)
	require.Empty(t, ofKind(eff, EffectWorkerUnfollow), "the second task left 30 s ago")
	again := ofKind(eff, EffectTimerSet)
	require.Len(t, again, 1)
	require.Equal(t, second+config.DefaultWorkerRestAfterMs-h.now, again[0].DelayMs)
	eff = h.fire("worker.rest:w1", second+config.DefaultWorkerRestAfterMs)
	require.Len(t, ofKind(eff, EffectWorkerUnfollow), 1)
}

// A fan-out of "auto" launches on resting workers, their health answers coming after all the
// launches: the first answer wakes w1 and the launches after it go there without asking again
// (it counts as up while its stream comes up), those past its slots ask w2's health and go there.
// None waits for a local slot while the workers have free ones.
func TestAnAutoFanOutWakesRestingWorkers(t *testing.T) {
	h := newWK(t, twoWorkers(func(c *config.Config) {
		c.MaxConcurrentStarts = 1
		for name, w := range c.Workers {
			w.MaxTasks = 3
			c.Workers[name] = w
		}
	}))
	h.run(Event{Type: EventStart})
	h.state("w1", true, "")
	h.state("w2", true, "")
	h.fire(HeartbeatTimer, h.now+config.DefaultWorkerRestAfterMs+1)
	var asks []Effect
	for i := range 7 {
		eff := h.step(Event{Type: EventToolCall, CallID: fmt.Sprintf("call_%d", i), Tool: ToolTask, SessionID: "ses_p", MessageID: "msg_p",
			Args: json.RawMessage(`{"description":"d","prompt":"work","agent":"general","worker":"auto"}`)})
		asks = append(asks, ofKind(eff, EffectWorkerHealth)...)
	}
	for len(asks) > 0 {
		e := asks[0]
		asks = asks[1:]
		eff := h.step(Event{Type: EventEffectDone, EffectID: e.ID, OK: true, Result: json.RawMessage(`{"healthy":true,"version":"1.18.33"}`)})
		asks = append(asks, ofKind(eff, EffectWorkerHealth)...)
	}
	where := map[string]int{}
	for _, tk := range h.m.activeTasks() {
		where[tk.Worker+map[bool]string{true: " queued"}[tk.Queued]]++
	}
	require.Equal(t, map[string]int{"w1": 3, "w2": 3, "": 1}, where)
	require.Len(t, ofKind(h.effects, EffectWorkerFollow), 4, "2 at the start, and one wake each")
}
