package core

import "fmt"

// A non-interactive run (`opencode run`) ends when its session's turn ends, and takes the tasks
// that turn launched with it. OpenCode gives a plugin no way to keep the turn open, but it awaits
// the hook that closes each text part of the model's answer (experimental.text.complete), and its
// loop goes on as long as a user message newer than the last answer is waiting. So the host, when
// it runs headless (config.HeadlessConfig.Active), asks here at every text part's end
// (HookTurnEnd), and the core answers at once unless the session has work of its own under way;
// then the answer waits until a notice that wakes the session has reached it (OpenCode then gives
// the session another step, with the results) or until nothing of the session's is left to wait
// for. Each task ends by its own limits (timeout, budgets); a stall notice wakes the session in
// a headless run, so its model can decide. docs/rationale/headless.md tells what else was tried.

// HookTurnEnd is the name under which a host asks, with the tool.call envelope, whether the
// end of a text part of sessionID's answer may go on; the tool.reply comes when it may.
const HookTurnEnd = "asyncagents.turnend"

// HookStopping is the name under which a host tells the core, with the tool.call envelope, that
// the process was told to stop (SIGINT or SIGTERM). In a headless run the core cancels every task
// still running, keeping its partial work in the history; the tool.reply comes once the
// cancellations are recorded (their history lines go ahead of it).
const HookStopping = "asyncagents.stopping"

// stoppedReason is the cancel reason of a task whose headless run was stopped.
const stoppedReason = "the headless run was stopped (SIGINT or SIGTERM)"

// turnHold is a held text part's end: its session, and when it was held.
type turnHold struct {
	session string
	since   int64
	// abortOf: the task that ended, whose child is being aborted; the hold is answered once that
	// abort is done or seen (holdForAbort). Kept by ID: the way up from a subagent may be
	// forgotten meanwhile.
	abortOf string
}

// aborting reports whether the hold waits for its task's child's abort.
func (h turnHold) aborting() bool { return h.abortOf != "" }

// headlessState is what the core follows of a headless run's sessions, for the holds only.
type headlessState struct {
	holds map[string]turnHold // by the hook's call ID
	// wokeAt is when the last notice that wakes a session was sent to it; userAt the newest
	// user message seen in it (OpenCode's time): the notice has reached the session once
	// userAt >= wokeAt. Kept for the sessions whose turn ends are held (holdsTurnOf).
	wokeAt map[string]int64
	userAt map[string]int64
	// answers: the latest answer of each session whose turn ends may be held, for answerBegan.
	answers map[string]answerStart
}

// answerStart is an answer's message and its creation (OpenCode's clock).
type answerStart struct {
	id string
	at int64
}

// holdsTurnEnd reports whether the end of session's answer begun at since waits: for a notice
// still owed to it, or for its task's slot back (nested_turns.go).
func (m *Machine) holdsTurnEnd(session string, since int64) bool {
	if session == "" || !m.holdsTurnOf(session) {
		return false
	}
	return m.turnOwed(session, since) || m.waitsForSlot(session)
}

func (m *Machine) onTurnEndHook(ev Event) {
	since := m.answerBegan(ev.SessionID, ev.MessageID)
	if !m.holdsTurnEnd(ev.SessionID, since) {
		m.replyTool(ev.CallID, "", nil)
		return
	}
	if m.headless.holds == nil {
		m.headless.holds = map[string]turnHold{}
	}
	m.headless.holds[ev.CallID] = turnHold{session: ev.SessionID, since: since}
	m.log("info", fmt.Sprintf(headlessHoldFmt, ev.SessionID))
	m.yieldSlot(ev.SessionID) // a task's child: its task holds no slot while it waits
	if m.outbox.Get(ev.SessionID) != nil {
		m.markReady(ev.SessionID) // a stall notice waiting for it to be idle wakes it now (flushParent)
	}
}

// answerBegan is when the answer whose text part ends began: its message's creation, when the
// events told it (noteAnswer), else now. A wake stored after it began is newer than it, and the loop answers that wake once the
// step closes.
func (m *Machine) answerBegan(session, messageID string) int64 {
	if a := m.headless.answers[session]; messageID != "" && a.id == messageID && a.at > 0 {
		return min(a.at, m.now)
	}
	return m.now
}

// noteAnswer records an assistant message of session, whose turn ends may be held: a task's
// child on this machine, a subagent's below a task, a headless run's. (A subagent's below a
// worker's task is kept too, and never read: its text parts' ends are its worker's to hold.)
func (m *Machine) noteAnswer(session, id string, created int64) {
	if !m.holdsTurnOf(session) {
		return
	}
	if m.headless.answers == nil || len(m.headless.answers) >= maxSessionsBelow {
		// Each goes at its session's idle; should idles be missed, forgetting them all only
		// delays a hold's end (answerBegan falls back to now).
		m.headless.answers = map[string]answerStart{}
	}
	m.headless.answers[session] = answerStart{id: id, at: created}
}

// turnOwed reports whether session's turn, held since, must wait: a notice that wakes it is on
// its way (queued, with OpenCode, or accepted and not yet seen in the session), or, when none
// has reached it since the hold began, something of its own is still under way
// (ownWorkUnderway), or results wait in its outbox.
func (m *Machine) turnOwed(session string, since int64) bool {
	b := m.outbox.Get(session)
	if b != nil && (b.Sending > 0 || wakeQueued(b)) {
		return true
	}
	woke := m.headless.wokeAt[session]
	if woke != 0 && m.headless.userAt[session] < woke {
		return true
	}
	if woke != 0 && woke >= since {
		return false // the session has a message to answer: its loop goes on with it
	}
	if m.ownWorkUnderway(session) {
		return true
	}
	if b != nil && m.resultQueued(b.Queue) {
		// Results that do not wake it, and nothing left to wake it: they go now, waking it
		// (flushParent), so that its answer has them.
		m.markReady(session)
		return true
	}
	return false
}

// turnHeld reports whether session's turn end is held.
func (m *Machine) turnHeld(session string) bool {
	for _, h := range m.headless.holds {
		if h.session == session {
			return true
		}
	}
	return false
}

// wakeQueued reports whether a notice that wakes the session waits in its outbox.
func wakeQueued(b *parentBox) bool {
	for _, n := range b.Queue {
		if n.wake {
			return true
		}
	}
	return false
}

// releaseTurns answers every held text part whose session need wait no more; called at the end
// of each step.
func (m *Machine) releaseTurns() {
	if len(m.headless.holds) == 0 {
		return
	}
	for _, id := range m.holdIDs() {
		h := m.headless.holds[id]
		switch {
		case h.aborting(): // answered once the abort is done or seen (holdForAbort)
		case m.yielded(h.session): // it goes on through the queue (readyYielded)
		case !m.turnOwed(h.session, h.since):
			m.releaseTurn(id)
		default:
			m.yieldSlot(h.session) // work of its own may have begun since the hold did
		}
	}
}

// releaseSession answers the held text parts of session (its turn was interrupted, or it is
// gone): nothing it waited for will come.
func (m *Machine) releaseSession(session string) { m.releaseHolds(session, true) }

// releaseHolds answers the held text parts of session; without evenAborting, not those that wait
// for an abort (holdForAbort).
func (m *Machine) releaseHolds(session string, evenAborting bool) {
	for _, id := range m.holdIDs() {
		if h := m.headless.holds[id]; h.session == session && (evenAborting || !h.aborting()) {
			m.releaseTurn(id)
		}
	}
	m.unyield(m.holdOwner(session))
}

func (m *Machine) releaseTurn(callID string) {
	delete(m.headless.holds, callID)
	m.replyTool(callID, "", nil)
}

// noteWake records a notice that wakes session, sent now (outbox.go), for a session whose turn
// end waits for it: in a headless run, or a subagent's (nested_turns.go).
func (m *Machine) noteWake(session string) {
	if !m.holdsTurnOf(session) {
		return
	}
	if m.headless.wokeAt == nil {
		m.headless.wokeAt, m.headless.userAt = map[string]int64{}, map[string]int64{}
	}
	m.headless.wokeAt[session] = m.now
}

// noteUserMessage records a user message of session, created at created (OpenCode's clock),
// for a session a wake was sent to.
func (m *Machine) noteUserMessage(session string, created int64) {
	if _, ok := m.headless.wokeAt[session]; ok && created > m.headless.userAt[session] {
		m.headless.userAt[session] = created
	}
}

// forgetHeadless drops what was kept of a deleted session, or of an ended task's child; a hold
// that waits for the child's abort is answered with it (onChildAborted).
func (m *Machine) forgetHeadless(session string) {
	m.releaseHolds(session, false)
	delete(m.headless.wokeAt, session)
	delete(m.headless.userAt, session)
	delete(m.headless.answers, session)
}

// onStoppingHook cancels, in a headless run, every task still running or queued (those below
// included), each keeping its partial work, without notices: the process is ending, and the
// next run's restore does not take a cancelled task up again. Every hold is answered.
func (m *Machine) onStoppingHook(ev Event) {
	if m.cfg.Headless.Active {
		for _, t := range m.activeTasks() {
			if t.Status.Terminal() {
				continue // cancelled as the child of one cancelled before it
			}
			t.quiet = true // the cascade below it is quiet too (cancelBelow)
			m.cancel(t, stoppedReason)
		}
		for _, l := range m.startingLaunches() {
			l.cancelled, l.cancelReason = true, stoppedReason
		}
	}
	for _, id := range m.holdIDs() {
		session := m.headless.holds[id].session
		m.releaseTurn(id)
		m.unyield(m.holdOwner(session))
	}
	m.replyTool(ev.CallID, "", nil)
}

// holdIDs are the held calls' IDs, sorted for a deterministic effect order.
func (m *Machine) holdIDs() []string {
	ids := make([]string, 0, len(m.headless.holds))
	for id := range m.headless.holds {
		ids = append(ids, id)
	}
	sortStrings(ids)
	return ids
}
