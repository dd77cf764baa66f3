package core

import (
	"fmt"
	"strings"

	"github.com/asyncagents/asyncagents/core/ocevents"
	"github.com/asyncagents/asyncagents/core/outbox"
)

// The outbox: a task's notice is owed from the moment the task ends until OpenCode has accepted
// it, and the history records both moments. The task's record at its end carries NoticeOwed (the
// same line that says "completed", so no crash falls between the two); OpenCode's acceptance
// clears it and sets NotifiedAt, in a line of its own. Whatever happens in between (the parent is
// busy and the notice waits, OpenCode refuses it, the process dies), the notice is still owed:
//
//   - a notice held for a busy parent waits in the outbox (in memory) and in the history (owed);
//   - a refused one is sent again after noticeRetryBaseMs, doubling up to noticeRetryMaxMs, at
//     most noticeMaxTries times in a process (it stays owed in the history for the next one),
//     each time after reading the parent's messages, as a restore does;
//   - a restore delivers every notice still owed, once: before sending, it reads the parent's
//     messages, and a notice already there (sent before the crash, not yet recorded as accepted)
//     is recorded as accepted instead of sent again.
//
// Every notice goes through here, whatever its kind (a task's end, a stall, a batch's waking
// notice): a kind is its parts, whether it wakes the parent, and the tasks it tells of. All that
// is ready for one parent when a step ends goes as one message (one request to OpenCode), the
// texts one after another in the order they fell due, waking the parent if any of them would.
// While maxNoticesInFlight messages to a parent are with OpenCode, what falls due for that parent
// waits for an answer and goes as the next message (should OpenCode never answer, those notices stay owed in
// the history, and the next start delivers them).
// A notice must name each task it tells of in a synthetic part: that is what a restore looks for
// in the parent's messages.
//
// A new kind of notice posts a notice whose tasks come from owe (which marks each task's record),
// with its own parts. What a restore rebuilds is each owed task's end notice (endNotice): a notice
// telling of several tasks at once comes back after a crash as their end notices, in one message.

// notice is one notice in the outbox.
type notice struct {
	// tasks are the tasks the notice tells of, each with the NoticeOwed its record carries (0 for
	// a notice the history does not hold: a stall's).
	tasks []noticeTask
	// stalledSince is set on a stall's notice: the stall it tells of (liveness.go). The notice is
	// dropped if that stall is over by the time it could go.
	stalledSince int64
	// permission is set on a ⏸ line: the request it tells of. The notice is dropped if that
	// request was answered by the time it could go (permission.go).
	permission string
	// tries counts the refusals of this notice in a row: each message's own, so that another
	// message's acceptance or giving up leaves them as they are.
	tries int
	// end is set on a task's end notice: its batch's counts at the end, which the notice keeps
	// when an isolated task's is written again as it goes (worktree_notice.go).
	end   *batchCounts
	wake  bool
	agent string
	parts []TextPart
}

// noticeTask is a task a notice tells of (outbox.Task).
type noticeTask = outbox.Task

// parentBox is the outbox of one parent session (outbox.Box).
type parentBox = outbox.Box[notice]

// The delivery's bounds (package outbox).
const (
	maxNoticesInFlight = outbox.MaxInFlight
	noticeRetryMaxMs   = outbox.RetryMaxMs
	noticeMaxTries     = outbox.MaxTries
)

// noticeRetryPrefix names the timer of a parent's retry after a refusal.
const noticeRetryPrefix = "notice.retry:"

// box returns parent's outbox, made on first use.
func (m *Machine) box(parent string) *parentBox { return m.outbox.Box(parent) }

// owe marks each task's record as owing its parent a notice from now on, and returns them as the
// tasks of that notice.
func (m *Machine) owe(ts ...*run) []noticeTask {
	out := make([]noticeTask, 0, len(ts))
	for _, t := range ts {
		t.NoticeOwed = m.now
		m.touch(t)
		out = append(out, noticeTask{ID: t.ID, OwedAt: t.NoticeOwed})
	}
	return out
}

// post puts n in parent's outbox; it goes when the step ends, with whatever else is ready for
// that parent then.
func (m *Machine) post(parent string, n notice) {
	b := m.box(parent)
	b.Queue = append(b.Queue, n)
	m.markReady(parent)
}

// markReady has parent's outbox looked at when the step ends.
func (m *Machine) markReady(parent string) { m.outbox.MarkReady(parent) }

// flushOutbox sends what is ready, one message per parent, in parent order (deterministic).
func (m *Machine) flushOutbox() {
	if !m.outbox.AnyReady() || m.store.syncing > 0 {
		return // a sync's answer comes first (storage_fault.go)
	}
	for _, p := range m.outbox.TakeReady() {
		m.flushParent(p)
	}
}

// flushParent sends parent's queued notices as one message, unless they must wait: for the
// parent's messages to be read (a restore), for a retry's timer, or for a busy parent to go idle
// (a notice that does not wake it would cost a turn now: a noReply message to a busy session
// still costs one in OpenCode 1.18).
func (m *Machine) flushParent(parent string) {
	b := m.outbox.Get(parent)
	if b == nil || b.Waits() {
		return
	}
	if b.Check {
		b.Checking = true
		m.request(Effect{Kind: EffectMessages, SessionID: parent}, pending{outbox: parent})
		return
	}
	if m.awaitsSiblingCommit(parent, b.Queue) {
		return // onWorktreeCommitted looks again: the commit's answer is under way
	}
	if m.awaitsPolledReads(parent, b.Queue) {
		return // the reads' answers, or the gather timer, look again
	}
	m.gathered(parent)
	queue := b.Queue[:0]
	wake := false
	for _, n := range b.Queue {
		if n.stalledSince != 0 {
			if t := m.task(n.tasks[0].ID); t == nil || t.StalledSince != n.stalledSince {
				continue // the stall is over (or the task ended): the notice would mislead
			}
		}
		if n.permission != "" {
			if t := m.task(n.tasks[0].ID); t == nil || t.Status.Terminal() || t.pendingPermission(n.permission) == nil {
				continue // answered meanwhile: the user has seen it, and the child goes on
			}
		}
		queue = append(queue, m.rewriteEnd(n))
		wake = wake || n.wake
	}
	b.Queue = queue
	if len(queue) == 0 {
		m.dropBox(parent)
		return
	}
	if !wake && m.busy[parent] && m.turnHeld(parent) && stallQueued(queue) {
		wake = true // a held subagent reads a stall of its tasks now, and decides (liveness.go)
	}
	if !wake && m.busy[parent] {
		if !m.turnHeld(parent) || m.ownWorkUnderway(parent) || !m.resultQueued(queue) {
			return // onParentStatus flushes it when the parent goes idle
		}
		wake = true // a held turn: nothing else of its own will come to wake it, and it reads them
	}
	if wake && m.taskOver(parent) && !m.heldForWork(parent) {
		// A session whose task is over answers no one: a notice that reaches it anyway (a task of
		// its own found finished after a restart) is stored there without a model turn
		// (orphans.go). Not one whose turn is held for its own tasks (a native subagent outliving
		// its task's end): the notice is what lets that turn end.
		wake = false
		if m.busy[parent] {
			return // a noReply message to a busy session costs a turn: it waits for the idle
		}
	}
	if wake && b.Sending > 0 {
		return // it goes last: onNoticeDone looks again when the one in flight is answered
	}
	b.Queue = nil
	b.Sending++
	b.Waking = wake
	if wake {
		m.noteWake(parent)
	}
	e := Effect{Kind: EffectPromptAsync, Notice: true, SessionID: parent, NoReply: !wake}
	for _, n := range queue {
		if e.Agent == "" {
			e.Agent = n.agent // one that names none takes the others' (cascade.go agentOf)
		}
		e.Parts = append(e.Parts, n.parts...)
		for _, t := range n.tasks {
			e.TaskIDs = append(e.TaskIDs, t.ID)
		}
	}
	if warning, ok := m.storageWarning(); ok {
		e.Parts = append(e.Parts, warning)
	}
	e.TaskID = e.TaskIDs[0]
	if len(e.TaskIDs) == 1 {
		e.TaskIDs = nil
	}
	m.request(e, pending{taskID: e.TaskID, notice: true, outbox: parent, notices: queue})
}

// dropBox forgets parent's outbox once nothing is in it or under way for it.
func (m *Machine) dropBox(parent string) {
	if b := m.outbox.Get(parent); b != nil && b.Idle() {
		m.outbox.Delete(parent)
		m.gathered(parent)
	}
}

// onNoticeDone records OpenCode's answer to a notice: accepted, each task's notice is no longer
// owed; refused, the notice goes again after a backoff, with whatever joined the queue meanwhile.
func (m *Machine) onNoticeDone(p pending, ev Event) {
	if b := m.outbox.Get(p.outbox); b != nil {
		b.Sending = max(b.Sending-1, 0)
		if b.Sending == 0 {
			// A waking message goes alone; a held session's may wake for notices none of which
			// asks it to (flushParent), so its answer ends the wait whatever they say.
			b.Waking = false
		}
	}
	if ev.OK {
		for _, n := range p.notices {
			m.accepted(n)
		}
		if b := m.outbox.Get(p.outbox); b != nil {
			if len(b.Queue) > 0 {
				m.markReady(p.outbox) // what fell due while this one was out
			}
			m.dropBox(p.outbox)
		}
		return
	}
	// A notice of tasks since forgotten (their parent deleted, or cleared by it) is not tried
	// again: no record owes it any more.
	var again []notice
	for _, n := range p.notices {
		if m.task(n.tasks[0].ID) != nil {
			n.tries++
			again = append(again, n)
		}
	}
	if len(again) == 0 {
		m.log("warn", fmt.Sprintf(noticeRefusedFmt, strings.Join(noticeTaskIDs(p.notices), ", "), ev.Error))
		return
	}
	if sessionGone(ev, p.outbox) {
		m.parentGone(p.outbox, again)
		return
	}
	b := m.box(p.outbox)
	b.Queue = append(again, b.Queue...)
	// A failed answer does not prove OpenCode has not stored the message (a request that timed
	// out, a connection cut after the write): the retry reads the parent's messages first, as a
	// restore does.
	b.Check = true
	m.refused(p.outbox, b, fmt.Sprintf(noticeRefusedFmt, strings.Join(noticeTaskIDs(again), ", "), ev.Error))
}

// refused backs off after a failed delivery (or a failed read of the parent's messages), whose
// notices' tries the caller counted: the next try comes after a delay that doubles with them, and
// a notice refused noticeMaxTries times is given up for this process (it stays owed in the
// history: the next restore tries again). The other notices of the outbox keep their own count.
func (m *Machine) refused(parent string, b *parentBox, why string) {
	var tries, gaveUp int
	b.Queue, tries, gaveUp = outbox.GiveUp(b.Queue, func(n notice) int { return n.tries })
	if gaveUp > 0 {
		m.log("error", why+fmt.Sprintf(noticeGiveUpFmt, gaveUp))
		if !wakeQueued(b) {
			delete(m.headless.wokeAt, parent) // a held turn end waits for no wake given up
		}
	}
	if tries == 0 {
		// Nothing refused is left to retry: the rest go as they would have.
		b.Check = b.Check && len(b.Queue) > 0
		if b.Retrying {
			b.Retrying = false
			m.emit(Effect{Kind: EffectTimerClear, TimerID: noticeRetryPrefix + parent})
		}
		m.markReady(parent)
		m.dropBox(parent)
		return
	}
	delay := outbox.Backoff(tries)
	m.log("warn", why+noticeRetry(delay))
	b.Retrying = true
	m.emit(Effect{Kind: EffectTimerSet, TimerID: noticeRetryPrefix + parent, DelayMs: delay})
}

// stallQueued reports whether a stall notice is among queue.
func stallQueued(queue []notice) bool {
	for _, n := range queue {
		if n.stalledSince != 0 {
			return true
		}
	}
	return false
}

// onNoticeRetry tries parent's outbox again when its backoff is over.
func (m *Machine) onNoticeRetry(parent string) {
	if b := m.outbox.Get(parent); b != nil {
		b.Retrying = false
		m.flushParent(parent)
	}
}

// accepted records that OpenCode has a notice: each task it tells of owes it no more.
func (m *Machine) accepted(n notice) {
	for _, nt := range n.tasks {
		if nt.OwedAt == 0 {
			continue
		}
		// A task that ended again since (a resume) owes its new notice still.
		if t := m.task(nt.ID); t != nil && t.NoticeOwed == nt.OwedAt {
			t.NoticeOwed, t.NotifiedAt = 0, m.now
			m.touch(t)
		}
	}
}

func noticeTaskIDs(ns []notice) []string {
	var ids []string
	for _, n := range ns {
		for _, t := range n.tasks {
			ids = append(ids, t.ID)
		}
	}
	return ids
}

// restoreOutbox puts every notice the history says is owed back in the outbox, to be sent once
// the parent's messages show it is not there yet. A read-only view never sends.
func (m *Machine) restoreOutbox() {
	for _, t := range m.apiView() {
		// NoticeOwed is in a finished task's head: no task is read whole here.
		if t.NoticeOwed == 0 || !t.Status.Terminal() || t.ParentSessionID == "" {
			continue
		}
		to := m.owedTo(m.task(t.ID))
		m.post(to, m.endNotice(m.task(t.ID)))
		m.box(to).Check = true
	}
	m.flushOutbox()
}

// onOutboxChecked sends the restored notices the parent's messages do not hold yet, and records
// the others as accepted: they were sent before the crash, which came before the record.
func (m *Machine) onOutboxChecked(p pending, ev Event) {
	b := m.outbox.Get(p.outbox)
	if b == nil {
		return
	}
	b.Checking = false
	if sessionGone(ev, p.outbox) {
		m.parentGone(p.outbox, b.Queue)
		return
	}
	var msgs []message
	var err error
	if ev.OK {
		msgs, err = ocevents.DecodeMessages(ev.Result)
	}
	if !ev.OK || err != nil {
		why := ev.Error
		if ev.OK {
			why = "the answer is not a list of messages"
		}
		for i := range b.Queue {
			b.Queue[i].tries++ // the read was for them all
		}
		m.refused(p.outbox, b, fmt.Sprintf(noticeCheckFailedFmt, p.outbox, why))
		return
	}
	b.Check = false
	queue := b.Queue[:0]
	for _, n := range b.Queue {
		if outbox.Delivered(msgs, n.tasks, tellsOfEnd) {
			m.accepted(n)
			continue
		}
		queue = append(queue, n)
	}
	b.Queue = queue
	m.flushParent(p.outbox)
}

// parentGone handles a parent OpenCode says is not there (deleted while OpenCode was down, so no
// session.deleted reached the core): retrying its notices could never succeed, and every start
// would try again. Its tasks go as they would have on the event.
func (m *Machine) parentGone(parent string, owed []notice) {
	m.log("info", fmt.Sprintf(noticeParentGoneFmt, parent, strings.Join(noticeTaskIDs(owed), ", ")))
	m.onSessionDeleted(parent)
}

// sessionGone reports whether a failed request says that session does not exist: OpenCode
// answers 404 with a NotFoundError whose message names the session, and the hosts pass that
// message on in the error.
func sessionGone(ev Event, sessionID string) bool {
	return !ev.OK && sessionID != "" && strings.Contains(ev.Error, sessionNotFoundPrefix+sessionID)
}

// sessionNotFoundPrefix starts OpenCode's message for a session it does not have (1.18).
const sessionNotFoundPrefix = "Session not found: "

// dropOutbox forgets what is owed to a parent that is gone.
func (m *Machine) dropOutbox(parent string) {
	m.gathered(parent)
	if b := m.outbox.Get(parent); b != nil {
		if b.Retrying {
			m.emit(Effect{Kind: EffectTimerClear, TimerID: noticeRetryPrefix + parent})
		}
		m.outbox.Delete(parent)
	}
}
