package core

import (
	"encoding/json"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/internal/tasktest"
	"github.com/stretchr/testify/require"
)

// readOnlyWorkers is twoWorkers in a read-only view (asyncagents serve).
func readOnlyWorkers(t *testing.T) *wkHarness {
	return newWK(t, twoWorkers(func(c *config.Config) { c.API.ReadOnly = true }))
}

// workersOf is GET /v1/workers's answer, by name.
func (h *wkHarness) workersOf() (map[string]WorkerInfo, string) {
	r := h.m.ServeHTTP(apiGet("/v1/workers", ""), tasktest.APIConfig, h.now)
	require.Equal(h.t, 200, r.Status, r.Body)
	var got struct {
		Workers []WorkerInfo `json:"workers"`
	}
	require.NoError(h.t, json.Unmarshal([]byte(r.Body), &got))
	out := map[string]WorkerInfo{}
	for _, w := range got.Workers {
		out[w.Name] = w
	}
	return out, r.Body
}

// A read-only view follows no stream and asks OpenCode nothing, but asks each worker's health
// at its start: /v1/workers shows w1 reachable with its version, w2 unreachable with the host's
// reason, and each stream as "not followed", not as a state it does not know.
func TestReadOnlyViewAsksEachWorkersHealth(t *testing.T) {
	h := readOnlyWorkers(t)
	before, _ := h.workersOf()
	require.Equal(t, WorkerNotFollowed, before["w1"].State)
	require.Equal(t, WorkerUnknown, before["w1"].Health, "not asked yet")

	h.healthErr["w2"] = "wrong username or password (401)"
	eff := h.run(Event{Type: EventStart})
	require.Empty(t, ofKind(eff, EffectWorkerFollow), "no stream is followed")
	require.Empty(t, ofKind(eff, EffectAgentsList), "OpenCode is asked nothing")
	asks := ofKind(eff, EffectWorkerHealth)
	require.Len(t, asks, 2)
	require.Equal(t, "W2_PASSWORD", asks[1].Remote.PasswordEnv, "the variable's name: the host reads it")
	require.True(t, probeArmed(eff), "the next round is armed")

	got, body := h.workersOf()
	w1, w2 := got["w1"], got["w2"]
	require.Equal(t, WorkerNotFollowed, w1.State)
	require.Equal(t, WorkerReachable, w1.Health)
	require.Equal(t, "1.18.33", w1.Version)
	require.Empty(t, w1.HealthError)
	require.Positive(t, w1.HealthAt)
	require.Equal(t, WorkerNotFollowed, w2.State)
	require.Equal(t, WorkerUnreachable, w2.Health)
	require.Equal(t, "wrong username or password (401)", w2.HealthError)
	require.NotContains(t, body, "PASSWORD", "not even the variable's name")
	noSecret(t, body)

	table, err := WorkersTable(body, h.now+2_000)
	require.NoError(t, err)
	require.Regexp(t, `(?m)^w1 .* 1\.18\.33 +reachable for 2\.0s$`, table)
	require.Regexp(t, `(?m)^w2 .* - +unreachable for 2\.0s: wrong username or password \(401\)$`, table)
	require.Contains(t, table, "Read-only view (asyncagents serve): no worker's stream is followed")
}

// The asks go on at each WorkerProbeIntervalMs, one in flight per worker at a time; a worker
// that comes back shows reachable again, since its return.
func TestReadOnlyViewAsksAgainAtItsInterval(t *testing.T) {
	h := readOnlyWorkers(t)
	h.healthErr["w1"] = "connection refused"
	h.run(Event{Type: EventStart})
	got, _ := h.workersOf()
	require.Equal(t, WorkerUnreachable, got["w1"].Health)
	require.Equal(t, "connection refused", got["w1"].HealthError)

	// w2's ask of this round stays unanswered: the next round asks w1 only.
	round := h.step(Event{Type: EventTimer, TimerID: workerProbeTimer})
	require.Len(t, ofKind(round, EffectWorkerHealth), 2)
	var held int64
	for _, e := range ofKind(round, EffectWorkerHealth) {
		if e.Worker == "w2" {
			held = e.ID
			continue
		}
		h.run(Event{Type: EventEffectDone, EffectID: e.ID, OK: true, Result: json.RawMessage(`{"healthy":true,"version":"1.18.34"}`)})
	}
	back := h.now
	next := h.step(Event{Type: EventTimer, TimerID: workerProbeTimer})
	asks := ofKind(next, EffectWorkerHealth)
	require.Len(t, asks, 1)
	require.Equal(t, "w1", asks[0].Worker)
	require.True(t, probeArmed(next))

	got, _ = h.workersOf()
	require.Equal(t, WorkerReachable, got["w1"].Health)
	require.Equal(t, "1.18.34", got["w1"].Version)
	require.Equal(t, back, got["w1"].HealthSince)
	h.run(Event{Type: EventEffectDone, EffectID: held, OK: true, Result: json.RawMessage(`{"healthy":false}`)})
	got, _ = h.workersOf()
	require.Equal(t, WorkerUnreachable, got["w2"].Health)
	require.Equal(t, workerUnhealthy, got["w2"].HealthError)
}

// An instance that replaced a trapped one gets no start: its restore begins the asks, once.
func TestReadOnlyRestoreBeginsTheAsks(t *testing.T) {
	h := readOnlyWorkers(t)
	_, eff := h.m.Restore(h.now, "")
	require.Len(t, ofKind(eff, EffectWorkerHealth), 2)
	require.Empty(t, ofKind(h.step(Event{Type: EventStart}), EffectWorkerHealth), "begun already")
	// Nor does the read-only machine of another process's log it follows (read from an index as
	// a restore): the view asks, once.
	h.m.FollowSource(h.now, "history-k.7.log", "not a record\n", "not an index", true)
	require.NotNil(t, h.m.others["history-k.7.log"])
	require.Empty(t, h.m.others["history-k.7.log"].pending)
	// The plugin's own server asks no health of its own: its streams say it.
	plugin := newWK(t, twoWorkers(nil))
	_, eff = plugin.m.Restore(plugin.now, "")
	require.Empty(t, ofKind(eff, EffectWorkerHealth))
	require.Empty(t, ofKind(plugin.step(Event{Type: EventTimer, TimerID: workerProbeTimer}), EffectWorkerHealth))
}

// probeArmed reports whether eff arms the next round of asks.
func probeArmed(eff []Effect) bool {
	for _, e := range ofKind(eff, EffectTimerSet) {
		if e.TimerID == workerProbeTimer && e.DelayMs == WorkerProbeIntervalMs {
			return true
		}
	}
	return false
}
