package core

import "github.com/asyncagents/asyncagents/core/task"

// A subagent's answer is someone's result. A task's child that launched tasks of its own, and a
// subagent that OpenCode's own `task` tool runs (under the user's session or under a task's
// child), would otherwise answer "launched" and end: the task's result, or the native tool's,
// would be that answer, and the answer to their tasks' notices, which wake the session later,
// would reach no one. So the end of such a session's turn is held as a headless run holds its
// parent's (headless.go): its text part's end waits until the notice that wakes it is stored in
// it, or until nothing of its own is left under way; its loop then goes on with the results, and
// its next answer is the one its parent gets. The user's own session is never held outside a
// headless run: there, background work is the point. A child on a worker runs no plugin, and
// launches nothing.
//
// While its child is held, a task is neither stalled nor a silent attempt (no stall notice, no
// fallback to the next model); its own timeout and budgets still run. It also holds no slot:
// under maxConcurrentStarts its own queued tasks could otherwise never start. Once nothing is
// owed it queues for a slot again, in its launch order, and its child goes on when it has one.
// docs/rationale/children.md tells what else was tried.

// yieldState is where a task stands while its child's turn is held for the child's own tasks.
type yieldState uint8

const (
	yieldNone  yieldState = iota
	yieldHeld             // its child's turn is held: it holds no slot and waits for no slot
	yieldReady            // nothing is owed it any more: it waits in the queue for a slot to go on
)

// holdsTurnOf reports whether session's turn end waits for its own tasks: any session of a
// headless run, else a subagent's (the child of a task at work here, or a session OpenCode made
// under another).
func (m *Machine) holdsTurnOf(session string) bool {
	if m.cfg.Headless.Waits() {
		return true
	}
	if t := m.task(session); t != nil {
		return !t.Status.Terminal() && t.Worker == ""
	}
	return m.sessionsBelow.get(session) != ""
}

// holdOwner is the task whose slot a hold of session gives up: the task whose child session is,
// or whose child runs session as a subagent (OpenCode's task tool); nil for any other session.
func (m *Machine) holdOwner(session string) *run {
	t := m.taskBelow(session)
	if t == nil || t.Status.Terminal() || t.Worker != "" {
		return nil
	}
	return t
}

// yieldSlot gives up the slot of the task whose child (or a subagent of it) was just held, so
// that the tasks it launched may start.
func (m *Machine) yieldSlot(session string) {
	t := m.holdOwner(session)
	if t == nil || t.Queued || t.yield == yieldHeld || !m.ownWorkUnderway(session) {
		// A hold that waits only for a wake in flight (a steer, a notice) keeps the slot:
		// releaseTurns lets it go in a moment.
		return
	}
	t.yield, t.Waiting = yieldHeld, nil // one waiting for its slot back is held again
	m.clearStall(t)
	m.startQueued()
}

// readyYielded puts back in the queue each task none of whose held sessions is owed anything
// now; the queue then lets the held sessions of each that has a slot go on. Called at the end of
// each step, before the history is written (its starts are history lines).
func (m *Machine) readyYielded() {
	if len(m.headless.holds) == 0 {
		return
	}
	owed := map[*run]bool{}
	for _, id := range m.holdIDs() {
		h := m.headless.holds[id]
		if t := m.holdOwner(h.session); t != nil && t.yield == yieldHeld {
			owed[t] = owed[t] || m.turnOwed(h.session, h.since)
		}
	}
	readied := false
	for t, o := range owed {
		if !o {
			t.yield = yieldReady
			readied = true
		}
	}
	if readied {
		m.startQueued()
	}
}

// goOn lets the held sessions of t go on: t has its slot again.
func (m *Machine) goOn(t *run) {
	t.yield, t.Waiting = yieldNone, nil
	// Its silence while held was no stall: the stall check and attempt timer count from now.
	t.Progress.LastUpdate = max(t.Progress.LastUpdate, m.now)
	m.touch(t)
	for _, id := range m.holdIDs() {
		// One held since, for a wake on its way only, waits for it still (releaseTurns).
		if h := m.headless.holds[id]; m.holdOwner(h.session) == t && !m.turnOwed(h.session, h.since) {
			m.releaseTurn(id)
		}
	}
}

// yielded reports whether the hold of session's turn ends through the queue (goOn), not at once.
func (m *Machine) yielded(session string) bool {
	t := m.holdOwner(session)
	return t != nil && t.yield != yieldNone
}

// unyield queues t for its slot back when no hold of its sessions is left (one was let go at once:
// an abort, a session gone): the slot it gave up may still be taken, by the very task it gave it
// to.
func (m *Machine) unyield(t *run) {
	if t == nil || t.yield != yieldHeld {
		return
	}
	for _, h := range m.headless.holds {
		if m.holdOwner(h.session) == t {
			return
		}
	}
	t.yield = yieldReady
	m.touch(t)
	m.startQueued()
}

// childHeld reports whether t's child (or a subagent of it) is held for its own tasks or for the
// slot: its silence is then no stall and no silent attempt. One queued for its slot back after its
// hold was let go at once (unyield) works on until its next answer's end, and is watched as any.
func (m *Machine) childHeld(t *run) bool {
	if t.yield == yieldNone {
		return false
	}
	for _, h := range m.headless.holds {
		if m.holdOwner(h.session) == t {
			return true
		}
	}
	return false
}

// waitsForSlot reports whether session's task waits in the queue for its slot back: a text part's
// end there waits with it (goOn lets it go), so that the child does not run without a slot.
func (m *Machine) waitsForSlot(session string) bool {
	t := m.holdOwner(session)
	return t != nil && t.yield == yieldReady
}

// ownWorkUnderway reports whether something of session's own may still send it a notice: a task
// it launched at work, a launch of its starting, or a task's end notice waiting for its worktree's
// commit.
func (m *Machine) ownWorkUnderway(session string) bool {
	for _, t := range m.activeTasks() {
		if t.ParentSessionID == session {
			return true
		}
	}
	for _, l := range m.startingLaunches() {
		if l.sessionID == session && !l.cancelled {
			return true
		}
	}
	for _, to := range m.wt.committing {
		if to == session {
			return true
		}
	}
	return false
}

// resultQueued reports whether queue tells of a task's end other than a cancel: what the held
// session's answer must have. A cancel (asked for by it, or by the user) and a ⏸ line give it
// nothing to answer, and are left for its idle.
func (m *Machine) resultQueued(queue []notice) bool {
	for _, n := range queue {
		if n.end == nil {
			continue
		}
		for _, nt := range n.tasks {
			if t := m.task(nt.ID); t == nil || t.Status != task.StatusCancelled {
				return true
			}
		}
	}
	return false
}

// slotTasks are the active tasks the start queue counts: all but those whose child is held.
func (m *Machine) slotTasks() []*run {
	active := m.activeTasks()
	out := active[:0:0]
	for _, t := range active {
		if t.yield != yieldHeld {
			out = append(out, t)
		}
	}
	return out
}

// idleWhileHeld treats an idle of a held session as the abort it is: OpenCode may report an
// aborted held turn idle before its error, when the session no longer looks busy and the cascade
// would skip it. The hold is let go, and the session's tasks
// cancelled as for any interrupted turn. Held or not, the session's answer is over.
func (m *Machine) idleWhileHeld(session string) {
	delete(m.headless.answers, session)
	switch {
	case !m.turnHeld(session):
	case m.parentOf(session) == "":
		// A headless run's own session: its stop cancels its tasks, quietly (headless.go).
		m.releaseSession(session)
	default:
		m.onTurnAborted(session)
	}
}

// holdForAbort is called as t ends before its child does, which is then aborted: the child's
// turn end and its subagents', if held, are answered only once the abort is done
// (onChildAborted) or OpenCode tells of it first (the idle, idleWhileHeld; the aborted message
// or session error, onTurnAborted). Answered before, OpenCode's loop would start a model call
// for a message waiting in the session, to be cut by the abort a moment later.
func (m *Machine) holdForAbort(t *run) {
	for id, h := range m.headless.holds {
		if m.taskBelow(h.session) == t { // its child's own, or a subagent's below it
			h.abortOf = t.ID
			m.headless.holds[id] = h
		}
	}
}

// onChildAborted answers the held turn ends that waited for the abort of task's child (done or
// failed: either way nothing more will come of it).
func (m *Machine) onChildAborted(taskID string) {
	for _, id := range m.holdIDs() {
		if h := m.headless.holds[id]; h.aborting() && h.abortOf == taskID {
			m.releaseTurn(id)
		}
	}
}
