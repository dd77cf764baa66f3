package core

// A polled tick's ends, told together. A poll finds the children that ended since the last one
// at once, but each one's end is read on its own, and so each would be told in a message of its
// own as its read comes back: one more message in the parent's conversation, and one more that
// OpenCode stores and publishes, for every child, where a followed worker's ends come spread out
// anyway. So a parent's end notices wait while a read that may end another of its tasks is
// still out on a polled worker (a status read of a worker that holds its tasks, or the read of
// such a task's messages at its end), and go together once none is. Reads come back in
// milliseconds; one asked polledGatherMs ago or more no longer holds anything (a worker that
// hangs), and a timer looks again then. Polled workers with the same pollMs tick together
// (pollDelay), so the ends both find in one tick make one message.

// polledGatherMs bounds how long a read out on a polled worker holds its parent's notices.
const polledGatherMs = 1000

// gatherTimerPrefix names the timer that looks at a held parent's notices again.
const gatherTimerPrefix = "notice.gather:"

// awaitsPolledReads reports whether parent's queued end notices wait for reads out on polled
// workers, arming the timer that looks again once the newest of them stops holding.
func (m *Machine) awaitsPolledReads(parent string, queue []notice) bool {
	if !m.anyPolled() || !anyEnd(queue) {
		return false
	}
	var until int64
	for _, p := range m.pending {
		if m.now-p.at < polledGatherMs && m.mayEndTaskOf(p, parent) {
			until = max(until, p.at+polledGatherMs)
		}
	}
	if until == 0 {
		return false
	}
	if m.gathering == nil {
		m.gathering = map[string]bool{}
	}
	m.gathering[parent] = true
	m.emit(Effect{Kind: EffectTimerSet, TimerID: gatherTimerPrefix + parent, DelayMs: until - m.now})
	return true
}

// mayEndTaskOf reports whether pending read p may end a task of parent: a status read of a
// polled worker that holds one, or the read of such a task's messages at its end.
func (m *Machine) mayEndTaskOf(p pending, parent string) bool {
	switch {
	case p.kind == EffectStatus && p.worker != "" && p.reconcile == nil && m.polled(p.worker):
		for _, id := range m.running() {
			if t := m.tasks[id]; t != nil && t.Worker == p.worker && t.ParentSessionID == parent {
				return true
			}
		}
	case p.kind == EffectMessages && !p.progress && p.taskID != "":
		t := m.task(p.taskID)
		return t != nil && !t.Status.Terminal() && t.ParentSessionID == parent && m.polled(t.Worker)
	}
	return false
}

// regather has every held parent's notices looked at again when the step ends: a read that held
// them came back.
func (m *Machine) regather() {
	for parent := range m.gathering {
		m.markReady(parent)
	}
}

// onGatherTimer looks at parent's held notices again: the reads that held them are old now.
func (m *Machine) onGatherTimer(parent string) { m.markReady(parent) }

// gathered forgets that parent's notices were held, once they went (or nothing holds them).
func (m *Machine) gathered(parent string) {
	if m.gathering[parent] {
		delete(m.gathering, parent)
		m.emit(Effect{Kind: EffectTimerClear, TimerID: gatherTimerPrefix + parent})
	}
}

// anyPolled reports whether any worker is polled.
func (m *Machine) anyPolled() bool {
	for name := range m.cfg.Workers {
		if m.polled(name) {
			return true
		}
	}
	return false
}

// anyEnd reports whether queue holds a task's end notice.
func anyEnd(queue []notice) bool {
	for _, n := range queue {
		if n.end != nil {
			return true
		}
	}
	return false
}

// pollDelay is how long until a polled worker's next tick: the next multiple of its pollMs, so
// that workers polled alike tick together.
func (m *Machine) pollDelay(name string) int64 {
	every := m.cfg.Workers[name].PollMs
	return every - m.now%every
}
