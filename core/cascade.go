package core

import (
	"fmt"

	"github.com/asyncagents/asyncagents/core/budget"
)

// The parent's interruption cascades. When a session's turn is aborted (Esc in the TUI, or
// POST /session/:id/abort), OpenCode marks that turn's assistant message with
// MessageAbortedError and publishes session.error, then idle. Every running and queued task of
// that session is then cancelled, and the tasks of those tasks, all the way down, each keeping
// its partial work, as OpenCode's own background subagents are cancelled with their parent. The
// parent gets one ⊘ line listing them, without a model turn. A turn that simply ends cancels
// nothing: that is the point of background tasks. An abort of a session that is already idle
// sends nothing a plugin can see, so nothing cascades then (the README says what to do instead).

// cascadeReason is the cancel reason of a task stopped with its parent.
const cascadeReason = "the parent's turn was interrupted"

// onTurnAborted cancels the tasks below a session whose turn was interrupted. It is called for
// both signals OpenCode may send (session.error, and the message's own error when the abort
// landed outside the model stream); the second finds nothing left to cancel.
func (m *Machine) onTurnAborted(sessionID string) {
	m.releaseSession(sessionID) // a held turn end waits for nothing now
	if sessionID == "" || !m.cfg.CascadeOn() {
		return
	}
	if !m.busy[sessionID] {
		// Not a turn this process saw running: OpenCode marks the turns a crash cut short as
		// aborted when it starts again, and their tasks are the restore's to reconcile (one may
		// have finished meanwhile: cancelling it would lose its result).
		return
	}
	if t := m.task(sessionID); t != nil && t.switching {
		return // our own abort, leaving a failing model: the task goes on, and so do its tasks
	}
	m.cascadeFrom(sessionID, cascadeReason, turnInterrupted)
}

// A native subagent whose model failed ends its turn there: OpenCode's loop stops at an answer
// that carries an error, and its task tool fails the call that ran the subagent. Its tasks would
// run on, and their notices wake it for a turn whose answer reaches no one, so they go as an
// interrupted turn's do. The sign is that answer, complete with its error, not session.error:
// OpenCode also reports there a notice it took and then failed to store, and an overflow it is
// about to compact, and neither ends the turn. Such a turn holds nothing by then: its loop waits
// on a held text part, so no answer of it fails while held. And the turns a crash cut short are
// marked aborted when OpenCode starts again, not failed: this one need not have been seen running.
// docs/rationale/children.md tells what else was considered.

// subagentFailedReasonFmt is the cancel reason of a task whose native subagent's model failed
// (%s: the error's name).
const subagentFailedReasonFmt = "the subagent that launched it failed (%s)"

// onAnswerFailed is told of an answer of session's that carries an error other than an abort.
// Only a native subagent's ends anything here: a task's child fails through its task
// (fallback.go, orphans.go), and the user's session keeps its background work.
func (m *Machine) onAnswerFailed(session, errName string) {
	if m.task(session) == nil && m.sessionsBelow.get(session) != "" && m.cfg.CascadeOn() {
		m.cascadeFrom(session, fmt.Sprintf(subagentFailedReasonFmt, errName), turnFailed)
	}
}

// cascadeFrom cancels, for reason, the tasks and launches below session, whose turn ended before
// their results could be read (how: turnInterrupted or turnFailed, for the model), and tells
// session of them in one line, without a model turn.
func (m *Machine) cascadeFrom(session, reason, how string) {
	var stopped []*run
	m.stopTogether(func() {
		stopped = m.cancelBelow(session, reason)
		m.cancelLaunches(session, reason, true)
	})
	if len(stopped) == 0 {
		return // nothing, or only launches without a task yet: nothing to list
	}
	m.toast(ToastInfo, cascadeToastTitle, m.cascadeVisible(stopped, how))
	// Owed like any notice (core/outbox.go): after a crash each comes back as its own end notice.
	m.post(session, notice{
		tasks: m.owe(stopped...),
		agent: m.agentOf(session, stopped),
		parts: []TextPart{
			{Type: "text", Text: m.cascadeVisible(stopped, how)},
			{Type: "text", Text: m.cascadeHidden(stopped, how), Synthetic: true},
		},
	})
}

// cancelBelow cancels the running and queued tasks launched from session, or from a subagent's
// session below it, and theirs below them, without a notice each (the caller tells of them at
// once). It returns them, parents first. One restored and not yet reconciled is left to its
// reconcile, which cancels it for reason if it finds it still at work (orphans.go).
func (m *Machine) cancelBelow(session, reason string) []*run {
	var stopped []*run
	for _, t := range m.activeTasks() {
		if !m.launchedUnder(t, session) || t.Status.Terminal() {
			continue
		}
		if m.awaitingReconcile(t) {
			t.cancelOnReconcile = reason
			continue
		}
		t.quiet = true
		stopped = append(stopped, t)
		stopped = append(stopped, m.cancel(t, reason)...)
	}
	return stopped
}

// agentOf is the agent of session's own turns, as the newest task it launched recorded it (among
// tasks, then among all): a notice speaks as that agent, since OpenCode gives the session's next
// turn the agent of its newest user message. Tasks launched from a subagent below it ran as the
// subagent's agent. With none of its own at all the notice names none (OpenCode's default agent).
func (m *Machine) agentOf(session string, tasks []*run) string {
	for i := len(tasks) - 1; i >= 0; i-- {
		if tasks[i].ParentSessionID == session {
			return tasks[i].ParentAgent
		}
	}
	for i := len(m.order) - 1; i >= 0; i-- {
		if t := m.tasks[m.order[i]]; t != nil && t.ParentSessionID == session && t.ParentAgent != "" {
			return t.ParentAgent
		}
	}
	return ""
}

// launchedUnder reports whether t was launched from session, or from a subagent's session below
// it: a subagent that returned long ago leaves its tasks to the session that ran it. The walk stops
// at another task's child, whose own cancel takes what lies below it.
func (m *Machine) launchedUnder(t *run, session string) bool {
	return m.sessionUnder(t.ParentSessionID, session)
}

// sessionUnder reports whether s is session, or a subagent's session below it that no task's
// child lies between.
func (m *Machine) sessionUnder(s, session string) bool {
	at, ok := budget.Find(s, maxSessionHops, m.sessionsBelow.get, func(x string) bool { return x == session || m.task(x) != nil })
	return ok && at == session
}
