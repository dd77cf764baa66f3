package core

// A task's result includes what its own tasks returned. A child that launched tasks of its own
// (itself, or through a subagent it ran) and then answered would otherwise end its task at once:
// its tasks' notices would wake its session later, and its answer to them would reach no one.
// So an answer that comes while tasks launched under the child are under way, or while a notice
// that wakes the child is on its way, does not end the task: the task stays at work, waiting for
// its tasks (no stall, no attempt timeout; its own timeout and budgets still run), their notices
// wake the child as any parent, and the child's next answer is the task's result. A headless run
// holds the child's turn for the same reason (headless.go); this is the rest of the time.
// A child on a worker runs no plugin, so it launches nothing.

// waitsForItsTasks reports whether t's child has tasks of its own under way, or a notice that
// wakes it on its way (queued, with OpenCode, or accepted and not yet seen stored in the session).
func (m *Machine) waitsForItsTasks(t *run) bool {
	c := t.SessionID
	if c == "" || t.Worker != "" {
		return false
	}
	if b := m.outbox.Get(c); b != nil {
		if b.Sending > 0 {
			return true
		}
		for _, n := range b.Queue {
			if n.wake {
				return true
			}
		}
	}
	if woke := m.headless.wokeAt[c]; woke != 0 && m.headless.userAt[c] < woke {
		return true
	}
	for _, r := range m.activeTasks() {
		if r != t && !r.Status.Terminal() && m.launchedUnder(r, c) {
			return true
		}
	}
	for _, l := range m.startingLaunches() {
		if !l.cancelled && m.sessionUnder(l.sessionID, c) {
			return true
		}
	}
	return false
}

// awaitItsTasks leaves t at work after its child's answer, waiting for its tasks: the poll reads
// the child again until nothing is owed, and the child's next answer ends the task.
func (m *Machine) awaitItsTasks(t *run) {
	if t.waitingTasks {
		return
	}
	t.waitingTasks = true
	m.clearStall(t)
	m.log("info", "task "+t.ID+": its child answered while tasks it launched are under way; the task waits for them")
}
