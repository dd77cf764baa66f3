package core

import (
	"fmt"

	"github.com/asyncagents/asyncagents/core/placement"
)

// Resting workers (docs/rationale/workers.md). A worker's /global/event stream carries every
// session's events: its own users' and other parents' children's as much as this parent's. A
// parent that follows a busy worker while it holds no task there reads all of it for nothing
// (30 to 50 ms of its process's CPU a second in a fan-out of another parent). So a worker that
// has held none of this parent's tasks for its restAfterMs rests: its stream is closed
// (worker.unfollow) and only its health is asked, at each heartbeat. A task placed there follows
// it again (wake), after a health check: "auto" takes a resting worker only on its health's
// word, as a named worker whose stream is not up always was, and a resting worker that does
// not answer is passed over for the next place.

// WorkerResting is the state of a worker whose stream this parent closed on purpose.
const WorkerResting = "resting"

// workerRestPrefix names the timer that rests a worker restAfterMs after its last task left it.
const workerRestPrefix = "worker.rest:"

// workersInUse are the workers that hold a task of this parent (running, starting or queued
// there), or that a launch waits on (its health check, its agent list).
func (m *Machine) workersInUse() map[string]bool {
	used := map[string]bool{}
	for _, t := range m.activeTasks() {
		if t.Worker != "" {
			used[t.Worker] = true
		}
	}
	for _, p := range m.pending {
		if p.launch != nil && p.worker != "" {
			used[p.worker] = true
		}
	}
	for name, w := range m.workers {
		if len(w.agentWaiters) > 0 {
			used[name] = true
		}
	}
	return used
}

// noteWorkerUse, after a step that changed tasks, starts the rest timer of each followed worker
// its last task just left.
func (m *Machine) noteWorkerUse() {
	if len(m.cfg.Workers) == 0 || m.cfg.API.ReadOnly {
		return
	}
	used := m.workersInUse()
	for _, name := range m.cfg.WorkerNames() {
		w := m.link(name)
		if used[name] {
			w.inUse = true
			continue
		}
		if !w.inUse {
			continue
		}
		w.inUse, w.idleSince = false, m.now
		if !w.resting && !w.restArmed {
			w.restArmed = true
			m.out = append(m.out, Effect{Kind: EffectTimerSet, TimerID: workerRestPrefix + name, DelayMs: m.cfg.Workers[name].RestAfterMs})
		}
	}
}

// onRestTimer rests name if it has held no task since the timer started; a task that came and
// went meanwhile moved its idle start, and the timer runs again for what is left.
func (m *Machine) onRestTimer(name string) {
	w := m.link(name)
	if w == nil {
		return
	}
	w.restArmed = false
	m.restIfIdle(name, w)
	if left := w.idleSince + m.cfg.Workers[name].RestAfterMs - m.now; !w.resting && !w.inUse && left > 0 {
		w.restArmed = true
		m.out = append(m.out, Effect{Kind: EffectTimerSet, TimerID: workerRestPrefix + name, DelayMs: left})
	}
}

// restIdleWorkers runs at each heartbeat: a worker never used since the start rests once
// restAfterMs has passed (no task leaving it started its timer), and each resting worker's
// health is asked, for the table and for "auto".
func (m *Machine) restIdleWorkers() {
	if len(m.cfg.Workers) == 0 || m.cfg.API.ReadOnly {
		return
	}
	for _, name := range m.cfg.WorkerNames() {
		w := m.link(name)
		if m.polled(name) {
			m.refreshPolledAgents(name, w) // workers_poll.go
			continue
		}
		if w.resting {
			m.askRestingHealth(name)
			if !w.agentsAsking {
				m.askWorkerAgents(name) // no dispose event tells of an agent added meanwhile
			}
			continue
		}
		m.restIfIdle(name, w)
	}
}

// restIfIdle closes name's stream when it is up, holds no task and has held none for
// restAfterMs. A stream that is down reads nothing: the worker keeps its state, "down" and why,
// and rests once it is up again.
func (m *Machine) restIfIdle(name string, w *workerLink) {
	if w.resting || m.polled(name) || w.state != WorkerUp || w.inUse || m.workersInUse()[name] || m.now-w.idleSince < m.cfg.Workers[name].RestAfterMs {
		return
	}
	// Its stream was up a moment ago: it counts as reachable until a health ask says not.
	w.resting, w.probe = true, probe{health: WorkerReachable, at: m.now, since: m.now}
	w.state, w.err, w.lastChangeAt = WorkerResting, "", m.now
	m.emit(Effect{Kind: EffectWorkerUnfollow, Worker: name, Remote: m.remote(name)})
	m.log("info", fmt.Sprintf("worker %s rests: no task of this parent for %s; its stream is closed until one goes there", name, restFor(m.cfg.Workers[name].RestAfterMs)))
	m.storeChanged()
}

// restFor says a rest delay in seconds.
func restFor(ms int64) string { return fmt.Sprintf("%d s", ms/1000) }

// wake follows name's stream again for a task that goes there; the lost timer holds it to
// coming up in time, as for a task placed on a worker whose stream is not up.
func (m *Machine) wake(name string) {
	w := m.link(name)
	if w == nil || !w.resting {
		return
	}
	w.resting, w.inUse, w.waking = false, true, true
	w.state, w.err, w.lastChangeAt = WorkerUnknown, "", m.now
	m.emit(Effect{Kind: EffectWorkerFollow, Worker: name, Remote: m.remote(name), Follow: &workerFollowRule})
	m.armLost(name)
	m.storeChanged()
}

// askRestingHealth asks a resting worker's health, unless an ask is in flight.
func (m *Machine) askRestingHealth(name string) {
	for _, p := range m.pending {
		if p.probe && p.worker == name {
			return
		}
	}
	m.request(Effect{Kind: EffectWorkerHealth, Worker: name, Remote: m.remote(name)}, pending{worker: name, probe: true})
}

// restingReachable reports whether name rests and its health has not said it is out of reach:
// "auto" may place a task there, after a health check.
func (m *Machine) restingReachable(name string) bool {
	w := m.link(name)
	return w != nil && w.resting && w.probe.health != WorkerUnreachable
}

// waking reports whether name was followed again for a task and its stream is not up yet.
func (m *Machine) waking(name string) bool {
	w := m.link(name)
	return w != nil && w.waking
}

// autoPlaceFollowed is where "auto" puts a task of agent now, among the local machine and the
// workers followed: a rerun goes where a stream already is, never to a resting worker unasked.
func (m *Machine) autoPlaceFollowed(agent string) string {
	free, ws := m.placesFor(agent)
	for i := range ws {
		ws[i].Resting = false
	}
	return placement.Auto(free, ws)
}

// resting reports whether name rests.
func (m *Machine) resting(name string) bool {
	w := m.link(name)
	return w != nil && w.resting
}
