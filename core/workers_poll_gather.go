package core

// A polled tick's ends, told together. A poll finds the children that ended since the last one
// at once, but each one's end is read on its own, and so each would be told in a message of its
// own as its read comes back: one more message in the parent's conversation, and one more that
// OpenCode stores and publishes, for every child, where a followed worker's ends come spread out
// anyway. So a queue of end notices waits while a read that may end another of the parent's
// tasks is still out on a polled worker (a status read of a worker that holds one, or such a
// task's end read), and goes as one message once none is. Reads come back in milliseconds; the
// wait is bounded all the same, at polledGatherMs from its start, however many reads follow one
// another (a worker that hangs, ticks that keep finding ends), with a timer that looks again
// then. A queue that holds any other line (a stall's, a question's) goes at once: those are meant
// to reach the user now. Polled workers with the same pollMs tick together (pollDelay), so the
// ends both find in one tick make one message.

// polledGatherMs bounds how long a parent's end notices wait for reads out on polled workers.
const polledGatherMs = 1000

// gatherTimerPrefix names the timer that looks at a held parent's notices again.
const gatherTimerPrefix = "notice.gather:"

// awaitsPolledReads reports whether parent's queue waits for reads out on polled workers: it
// holds end notices only, its wait began less than polledGatherMs ago, and such a read is out. It
// arms the timer that looks again when the wait's bound is reached.
func (m *Machine) awaitsPolledReads(parent string, queue []notice) bool {
	if !m.anyPolled() || !onlyEnds(queue) {
		return false
	}
	since, held := m.gathering[parent]
	if held && m.now-since >= polledGatherMs {
		return false
	}
	out := false
	for _, p := range m.pending {
		if m.mayEndTaskOf(p, parent) {
			out = true
			break
		}
	}
	if !out {
		return false
	}
	if !held {
		if m.gathering == nil {
			m.gathering = map[string]int64{}
		}
		since = m.now
		m.gathering[parent] = since
		m.emit(Effect{Kind: EffectTimerSet, TimerID: gatherTimerPrefix + parent, DelayMs: polledGatherMs})
	}
	return true
}

// mayEndTaskOf reports whether pending read p may end a task of parent: a status read of a
// polled worker that holds one, or the read of such a task's messages at its end (not a read of
// its progress, of a subagent's messages, or of the parent's own conversation for a fork).
func (m *Machine) mayEndTaskOf(p pending, parent string) bool {
	switch {
	case p.kind == EffectStatus && p.worker != "" && p.reconcile == nil && m.polled(p.worker):
		for _, id := range m.running() {
			if t := m.tasks[id]; t != nil && t.Worker == p.worker && t.ParentSessionID == parent {
				return true
			}
		}
	case p.kind == EffectMessages && !p.progress && p.sub == "" && !p.fork && !p.restored && p.outbox == "" && p.taskID != "":
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

// onGatherTimer ends parent's wait, even should the host's timer fire a little early, and has
// its notices looked at again.
func (m *Machine) onGatherTimer(parent string) {
	if _, held := m.gathering[parent]; held {
		m.gathering[parent] = m.now - polledGatherMs
	}
	m.markReady(parent)
}

// gathered ends parent's wait, once its notices went (or nothing holds them, or its box is gone).
func (m *Machine) gathered(parent string) {
	if _, held := m.gathering[parent]; held {
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

// onlyEnds reports whether queue holds tasks' end notices and nothing else.
func onlyEnds(queue []notice) bool {
	for _, n := range queue {
		if n.end == nil {
			return false
		}
	}
	return len(queue) > 0
}

// pollDelay is how long until a polled worker's next tick: the next multiple of its pollMs, so
// that workers polled alike tick together; past the next one when that is less than a quarter of
// pollMs away (a host timer that fired a little early must not tick twice).
func (m *Machine) pollDelay(name string) int64 {
	every := m.cfg.Workers[name].PollMs
	if d := every - m.now%every; d >= every/4 {
		return d
	}
	return 2*every - m.now%every
}
