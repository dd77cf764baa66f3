package core

import (
	"fmt"

	"github.com/asyncagents/asyncagents/core/text"
)

// A read-only view (`asyncagents serve`) follows no worker's stream: the tasks are another
// process's, and it asks OpenCode nothing. It still shows each worker's health, from its own
// worker.health asks (GET /global/health), at its start and every WorkerProbeIntervalMs
// (docs/rationale/workers.md). The stream's state stays apart: such a view names it "not
// followed", and the answer goes in the worker's health fields.

// WorkerProbeIntervalMs is how often a read-only view asks each worker's health.
const WorkerProbeIntervalMs = 15_000

// WorkerNotFollowed is the stream state a read-only view shows: it follows no stream.
const WorkerNotFollowed = "not followed"

// What a read-only view heard from a worker's GET /global/health.
const (
	WorkerReachable   = "reachable"
	WorkerUnreachable = "unreachable"
)

// workerProbeTimer fires each read-only ask round.
const workerProbeTimer = "worker.probe"

// workerUnhealthy is the reason when a worker answered but not as healthy.
const workerUnhealthy = "it answered, but not as healthy"

// workerProbeNoteFmt follows the table of a read-only view's workers.
const workerProbeNoteFmt = "Read-only view (asyncagents serve): no worker's stream is followed; HEALTH is its own GET /global/health, asked every %s.\n"

// probe is what a read-only view last heard from a worker's health.
type probe struct {
	health, err string
	at, since   int64 // when it was last answered, and since when the health is what it is
}

// probeWorkers starts the asks of a read-only view, once: at its start, or at the restore of an
// instance that replaced a trapped one (it gets no start).
func (m *Machine) probeWorkers() {
	if !m.cfg.API.ReadOnly || len(m.cfg.Workers) == 0 || m.probing {
		return
	}
	m.probing = true
	m.askHealths()
}

// askHealths asks each worker that has no ask in flight, and arms the next round.
func (m *Machine) askHealths() {
	busy := map[string]bool{}
	for _, p := range m.pending {
		if p.probe {
			busy[p.worker] = true
		}
	}
	for _, name := range m.cfg.WorkerNames() {
		if !busy[name] {
			m.request(Effect{Kind: EffectWorkerHealth, Worker: name, Remote: m.remote(name)}, pending{worker: name, probe: true})
		}
	}
	m.emit(Effect{Kind: EffectTimerSet, TimerID: workerProbeTimer, DelayMs: WorkerProbeIntervalMs})
}

// onProbed records a read-only view's answer (h, read once by onWorkerHealth): reachable with
// its version, or unreachable with the host's plain reason (a wrong password: "wrong username or password (401)").
func (m *Machine) onProbed(name string, ev Event, h healthAnswer) {
	w := m.link(name)
	if w == nil {
		return
	}
	health, why := WorkerUnreachable, ev.Error
	if ev.OK {
		if h.read && h.Healthy {
			health, why = WorkerReachable, ""
		} else if why == "" {
			why = workerUnhealthy
		}
		if h.Version != "" {
			w.version = h.Version
		}
	}
	if w.probe.health != health {
		w.probe.since = m.now
	}
	w.probe.health, w.probe.err, w.probe.at = health, why, m.now
	m.storeChanged()
}

// probeNote is the line under a table of workers a read-only view answered with.
func probeNote() string {
	return fmt.Sprintf(workerProbeNoteFmt, text.Duration(WorkerProbeIntervalMs))
}

// probed fills a read-only view's worker with what it heard, and says its stream is not followed.
func (m *Machine) probed(info *WorkerInfo) {
	info.State, info.Error, info.LastChangeAt, info.Health = WorkerNotFollowed, "", 0, WorkerUnknown
	if l := m.workers[info.Name]; l != nil && l.probe.health != "" {
		p := l.probe
		info.Health, info.HealthError, info.HealthSince, info.HealthAt = p.health, p.err, p.since, p.at
	}
}

// The plain reasons a host gives when a worker's request fails (ABI.md, worker.health), the
// same words in both hosts: the core shows them as they are.
const (
	// WorkerHealthMs bounds a worker.health ask, headers and body.
	WorkerHealthMs = 5_000
	// WorkerAuthFailed is a worker's 401.
	WorkerAuthFailed = "wrong username or password (401)"
	// WorkerRefused is a worker where nothing listens.
	WorkerRefused = "connection refused"
	// WorkerClosed is a worker that closed the connection before its answer.
	WorkerClosed = "the connection was closed"
)
