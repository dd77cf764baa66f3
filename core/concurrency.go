package core

import (
	"github.com/asyncagents/asyncagents/core/task"
)

// The start queue. A task runs only while a slot is free both under the overall cap
// (config.Config.MaxConcurrentStarts) and under the limit of the model it will use
// (config.ConcurrencyConfig: the exact model's entry, else its provider's, else the default).
// Each limit is a first-in-first-out queue of its own: a task waiting for a busy model never
// holds back one bound for a free model. A task beyond its limit has its ID at once and waits,
// queued and with no session (nothing idle sits in OpenCode), until a slot frees. A fallback to
// another model leaves the old model's slot and waits, with its session, for one on the new model.
// Slots are not kept as counters but counted from the running tasks on every decision, so no
// path (a cancel, a restore, a fallback) can leak one.

// slotUse counts the running tasks (those holding a slot) overall and per limit.
type slotUse struct {
	total int
	byKey map[string]int
}

func (m *Machine) slotsInUse() slotUse {
	u := slotUse{byKey: map[string]int{}}
	for _, t := range m.activeTasks() {
		if !t.Queued {
			u.total++
			u.byKey[m.cfg.Concurrency.LimitFor(t.Model).Key]++
		}
	}
	return u
}

// blockedBy names the limit that keeps a task on model from starting, given the slots in use;
// nil when it may start.
func (m *Machine) blockedBy(model string, u slotUse) *task.Wait {
	if u.total >= m.cfg.MaxConcurrentStarts {
		return &task.Wait{Limit: "maxConcurrentStarts", Max: m.cfg.MaxConcurrentStarts}
	}
	l := m.cfg.Concurrency.LimitFor(model)
	if l.Max > 0 && u.byKey[l.Key] >= l.Max {
		return &task.Wait{Limit: l.Option, Max: l.Max}
	}
	return nil
}

// runningCount is how many tasks hold a start slot.
func (m *Machine) runningCount() int { return m.slotsInUse().total }

// admit decides whether a new task starts now (true: the caller starts it, once the tool has its
// answer) or waits in the queue because its slot is taken. Tasks already waiting for the same
// limit go first.
func (m *Machine) admit(t *run) bool {
	t.Queued = true // not counted while deciding
	u := m.slotsInUse()
	if m.blockedBy(t.Model, u) == nil && !m.queuedAhead(t, u) {
		t.Queued = false
		return true
	}
	m.touch(t)
	m.refreshWaits()
	return false
}

// queuedAhead reports whether an older queued task waits for the limit t would take.
func (m *Machine) queuedAhead(t *run, u slotUse) bool {
	key := m.cfg.Concurrency.LimitFor(t.Model).Key
	for _, q := range m.activeTasks() {
		if q == t {
			return false
		}
		if q.Queued && m.cfg.Concurrency.LimitFor(q.Model).Key == key {
			return true
		}
	}
	return false
}

// waitForSlot puts a task that fell back to another model in the queue when that model's limit
// is reached: it keeps its session, and startQueued prompts it on the new model (refill).
func (m *Machine) waitForSlot(t *run) bool {
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
	if m.startsHeld > 0 {
		m.startsOwed = true
		return
	}
	u := m.slotsInUse()
	blocked := map[string]bool{} // limits whose oldest waiting task could not start: FIFO
	for _, t := range m.activeTasks() {
		if !t.Queued {
			continue
		}
		l := m.cfg.Concurrency.LimitFor(t.Model)
		if blocked[l.Key] {
			continue
		}
		if w := m.blockedBy(t.Model, u); w != nil {
			if w.Limit == "maxConcurrentStarts" {
				break
			}
			blocked[l.Key] = true
			continue
		}
		t.Queued, t.Waiting, t.QueuedUntil = false, nil, m.now
		u.total++
		u.byKey[l.Key]++
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
// limit's queue, for the tools, the status API and the dashboard.
func (m *Machine) refreshWaits() {
	u := m.slotsInUse()
	ahead := map[string]int{}
	for _, t := range m.activeTasks() {
		if !t.Queued {
			continue
		}
		key := m.cfg.Concurrency.LimitFor(t.Model).Key
		ahead[key]++
		w := m.blockedBy(t.Model, u)
		if w == nil {
			// Free under its own limit, behind older tasks of the same limit or the overall cap.
			l := m.cfg.Concurrency.LimitFor(t.Model)
			w = &task.Wait{Limit: l.Option, Max: l.Max}
		}
		w.Position = ahead[key]
		if t.Waiting == nil || *t.Waiting != *w {
			t.Waiting = w
			m.touch(t)
		}
	}
}
