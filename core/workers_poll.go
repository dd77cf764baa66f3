package core

import (
	"encoding/json"

	"github.com/asyncagents/asyncagents/core/httpapi"
	"github.com/asyncagents/asyncagents/core/ocevents"
)

// Polled workers (workers.<name>.pollMs; docs/rationale/workers_polled.md). A worker's event stream
// carries every session's events, each streamed text delta of each child there: the parent's
// process reads all of it to learn a few ends. A polled worker's stream is never opened.
// Instead, every pollMs, the machine asks its health (which says up or down, as the stream's
// connection does, and so arms and clears the lost timer), and while it holds tasks of this
// parent it reads their statuses and their pending questions, in each directory they use: the
// reads a stream's reconnect already makes (recheckWorker, askWorkerPermissions). A task the
// worker no longer lists as busy gets its messages read, which end it as an idle event would.
// A status read answered since the last tick says as much as the health would (up, and the
// password taken), so the health is then not asked; a failed one asks it at once, and the
// heartbeat asks it anyway, for the version the table shows.
//
// A busy task's newest messages are read every few seconds for its progress, partial work and
// spending, its subagents' found by its task tool's parts (workers_poll_progress.go,
// workers_poll_subagents.go). What the parent gives up (ends and questions up to pollMs late,
// progress a few seconds behind) and how the events no stream brings are made up for is in
// docs/rationale/workers_polled.md. What it gains: its cost grows with its own tasks, not with
// the workers' traffic.

// workerPollPrefix names a polled worker's timer.
const workerPollPrefix = "worker.poll:"

// polled reports whether worker name is polled instead of followed.
func (m *Machine) polled(name string) bool {
	w, ok := m.cfg.Workers[name]
	return ok && w.PollMs > 0
}

// startPolling, at start, asks a polled worker's health at once and arms its timer.
func (m *Machine) startPolling(name string) {
	m.askPolledHealth(name)
	m.emit(Effect{Kind: EffectTimerSet, TimerID: workerPollPrefix + name, DelayMs: m.pollDelay(name)})
}

// onPollTimer asks a polled worker's health again and, while it is up, reads its tasks'
// statuses and questions.
func (m *Machine) onPollTimer(name string) {
	if !m.polled(name) {
		return
	}
	w, answered := m.link(name), false
	if m.workerUp(name) {
		answered = w.tickedAt != 0 && w.answeredAt >= w.tickedAt
		w.tickedAt = m.now
		m.recheckWorker(name)
		m.askWorkerPermissions(name)
	}
	if !answered {
		m.askPolledHealth(name)
	}
	m.emit(Effect{Kind: EffectTimerSet, TimerID: workerPollPrefix + name, DelayMs: m.pollDelay(name)})
}

// askPolledHealth asks name's health, unless an ask is still in flight (a worker that hangs
// is not asked again and again: the host's request times out first).
func (m *Machine) askPolledHealth(name string) {
	for _, p := range m.pending {
		if p.polling && p.worker == name {
			return
		}
	}
	if w := m.link(name); w != nil {
		w.healthAskedAt = m.now
	}
	m.request(Effect{Kind: EffectWorkerHealth, Worker: name, Remote: m.remote(name)}, pending{worker: name, polling: true})
}

// onPolledHealth takes a polled worker's health as its stream's state: up when it answers as
// healthy, down (with why) otherwise. Only a change is a new state.
func (m *Machine) onPolledHealth(name string, ev Event, h healthAnswer) {
	w := m.link(name)
	if w == nil {
		return
	}
	up, why := ev.OK && h.read && h.Healthy, ev.Error
	if ev.OK && !up {
		why = workerUnhealthy
	}
	if up && h.Version != "" && h.Version != w.version {
		w.version = h.Version
		m.storeChanged()
	}
	switch {
	case up && w.state == WorkerUp:
	case !up && w.state == WorkerDown:
		if why != w.err { // still down, for another reason
			w.err = why
			m.storeChanged()
		}
	default:
		m.onWorkerState(Event{Worker: name, Up: up, Error: why})
	}
}

// onPolledStatusRead takes a polled worker's status read (read: its statuses came back) as word
// of its health: an answer stands for it at the next tick; a failure asks it at once, so that a
// worker that refuses is down as soon as its health alone would have said (one that hangs, a
// tick later: the read that hangs is not a failure until it times out).
func (m *Machine) onPolledStatusRead(name string, read bool) {
	w := m.link(name)
	switch {
	case w == nil || !m.polled(name):
	case read:
		w.answeredAt = m.now
	default:
		w.answeredAt = 0
		m.askPolledHealth(name)
	}
}

// notePolledBusy counts a polled task's busy status as activity (no stream brings its parts as
// they come) and reads its newest messages when they are due.
func (m *Machine) notePolledBusy(t *run) {
	if !m.polled(t.Worker) {
		return
	}
	t.polledBusyAt = m.now
	m.onActivity(t)
	m.readPolledProgress(t)
}

// polledStatus is what a status read says of a polled task: a retry is told as the stream's
// session.status would tell it, for the fallback and the task's retry mark.
func (m *Machine) polledStatus(t *run, raw json.RawMessage) {
	var s ocevents.SessionStatus
	if json.Unmarshal(raw, &s.Status) == nil && s.Status.Type == "retry" {
		s.SessionID = t.SessionID
		m.onDecoded(s)
		return
	}
	m.notePolledBusy(t)
}

// polledNoAnswerAfterMs is how long a polled task's session may sit not busy with no answer to
// its prompt before the prompt counts as failed: far past a slow start of OpenCode's loop.
const polledNoAnswerAfterMs = 30_000

// polledSilent reports whether t, on a polled worker, was prompted long ago, is not busy (its
// messages are read for that), and no answer began after its prompt: the stream would have said
// session.error, which nothing brings here.
func (m *Machine) polledSilent(t *run, msgs []message) bool {
	return m.polled(t.Worker) && t.promptSent && t.promptAskedAt != 0 &&
		m.now-t.promptAskedAt >= polledNoAnswerAfterMs && !m.answeredSincePrompt(t, msgs)
}

// answeredPermission is a permission.reply's request and answer.
type answeredPermission struct{ id, reply string }

// onPolledReplied records an answer the polled worker took, as its permission.replied would:
// otherwise the next read of its requests would find it gone and say so.
func (m *Machine) onPolledReplied(p pending) {
	t := m.task(p.taskID)
	if t == nil || p.answered == nil || !m.polled(t.Worker) {
		return
	}
	if r := t.pendingPermission(p.answered.id); r != nil {
		m.clearPermission(t, r, p.answered.reply)
	}
}

// refreshPolledAgents asks an up polled worker's agents again, at each heartbeat: no dispose
// event tells of an agent added or removed there. Its health too, for its version, if no tick
// asked it since the last heartbeat: the ticks skip it while its status reads answer.
func (m *Machine) refreshPolledAgents(name string, w *workerLink) {
	if w.state == WorkerUp && !w.agentsAsking {
		m.askWorkerAgents(name)
	}
	if m.now-w.healthAskedAt >= max(m.cfg.Workers[name].PollMs, httpapi.SSEHeartbeatIntervalMs) {
		m.askPolledHealth(name)
	}
}

// statusAsked reports whether a status read of worker name in dir is still out.
func (m *Machine) statusAsked(name, dir string) bool {
	for _, p := range m.pending {
		if p.kind == EffectStatus && p.worker == name && p.wt != nil && p.wt.dir == dir {
			return true
		}
	}
	return false
}

// messagesAsked reports whether a read of task id's messages is still out.
func (m *Machine) messagesAsked(id string) bool {
	for _, p := range m.pending {
		if p.kind == EffectMessages && p.taskID == id && p.sub == "" && p.settleEnd == 0 {
			return true
		}
	}
	return false
}
