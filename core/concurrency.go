package core

import (
	"github.com/asyncagents/asyncagents/core/slots"
	"github.com/asyncagents/asyncagents/core/task"
)

// The start queue: package slots decides (which task holds a slot, which starts, what each
// queued one waits for); the machine carries its decisions out. A task beyond its limit has its
// ID at once and waits, queued and with no session (nothing idle sits in OpenCode), until a slot
// frees. A fallback to another model leaves the old model's slot and waits, with its session, for
// one on the new model.

// limits are the caps the start queue enforces.
func (m *Machine) limits() slots.Limits { return slots.Of(m.cfg) }

// records are the tasks' records, in the same order, for the slots' decisions. A task whose held
// child is owed nothing any more waits in the queue as a queued one does (nested_turns.go).
func records(ts []*run) []*task.Task {
	out := make([]*task.Task, len(ts))
	for i, t := range ts {
		out[i] = &t.Task
		if t.yield == yieldReady {
			c := t.Task
			c.Queued = true
			out[i] = &c
		}
	}
	return out
}

// admit decides whether a new task starts now (true: the caller starts it, once the tool has its
// answer) or waits in the queue because its slot is taken. Tasks already waiting for the same
// limit go first.
func (m *Machine) admit(t *run) bool {
	t.Queued = true // not counted while deciding
	if m.limits().MayStart(records(m.slotTasks()), &t.Task) {
		t.Queued = false
		return true
	}
	m.touch(t)
	m.refreshWaits()
	return false
}

// waitForSlot puts a task that fell back to another model in the queue when that model's limit
// is reached: it keeps its session, and startQueued prompts it on the new model (refill).
func (m *Machine) waitForSlot(t *run) bool {
	if t.yield != yieldNone {
		// Its child ran on, so nothing of it is held (queued for its slot back by unyield, or
		// left yielded by a hold whose way up to it was forgotten): a slot on the new model is
		// what it waits for now, and the queue must see it as itself to give it one.
		t.yield, t.Waiting = yieldNone, nil
	}
	if m.admit(t) {
		return false
	}
	t.refill = true
	t.msg, t.sessionError, t.promptSent = nil, nil, false
	m.log("info", "task "+t.ID+": waiting for a slot on "+t.Model)
	return true
}

// startQueued starts queued tasks, oldest first within each limit, while slots are free.
func (m *Machine) startQueued() {
	if m.starts.Defer() {
		return
	}
	active := m.slotTasks()
	for _, i := range m.limits().Starts(records(active)) {
		t := active[i]
		if t.yield == yieldReady {
			m.goOn(t)
			continue
		}
		t.Queued, t.Waiting, t.QueuedUntil = false, nil, m.now
		m.touch(t)
		if t.refill {
			t.refill = false
			m.reprompt(t, false)
			continue
		}
		if t.Status == task.StatusResumed {
			m.startResume(t)
			continue
		}
		t.StartedAt = m.now
		m.startTask(t)
	}
	m.refreshWaits()
}

// refreshWaits records, on each queued task, the limit it waits for and its place in that
// limit's queue.
func (m *Machine) refreshWaits() {
	active := m.slotTasks()
	for i, w := range m.limits().Waits(records(active)) {
		if t := active[i]; w != nil && (t.Waiting == nil || *t.Waiting != *w) {
			t.Waiting = w
			m.touch(t)
		}
	}
}
