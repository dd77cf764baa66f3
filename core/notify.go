package core

import (
	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

// finish moves a task to a terminal status exactly once, then tells the parent and answers every
// asyncagents_output call blocked on it. A task that fails takes what its child launched with it
// (orphans.go); a task stopped on purpose is ended through stop, which cancels them itself.
func (m *Machine) finish(t *run, status task.Status, result string, taskErr *task.TaskError) {
	if t.Status.Terminal() {
		return
	}
	if status != task.StatusError || t.SessionID == "" {
		m.end(t, status, result, taskErr)
		return
	}
	m.stopTogether(func() {
		m.end(t, status, result, taskErr)
		m.cancelOrphans(t)
	})
}

// end is finish without a thought for the tasks below t.
func (m *Machine) end(t *run, status task.Status, result string, taskErr *task.TaskError) {
	if t.Status.Terminal() {
		return
	}
	if t.FallbackInfo != nil {
		if status == task.StatusError && t.exhausted && taskErr != nil {
			taskErr = allModelsFailed(t, taskErr)
		}
		if status == task.StatusCompleted {
			m.attemptSucceeded(t)
		} else {
			m.emit(Effect{Kind: EffectTimerClear, TimerID: attemptTimerPrefix + t.ID})
			if n := len(t.FallbackInfo.Attempts); n > 0 && t.FallbackInfo.Attempts[n-1].EndedAt == 0 {
				t.FallbackInfo.Attempts[n-1].EndedAt = m.now // the task ended under it
			}
		}
	}
	t.Status = status
	t.CompletedAt = m.now
	m.endStall(t)
	if status == task.StatusCompleted && t.Partial != nil {
		// The answer is the result: its text need not be kept twice.
		t.Partial.Text, t.Partial.TextChars = "", 0
	}
	t.Result = result
	t.Error = taskErr
	t.Queued, t.Waiting, t.refill, t.Retry = false, nil, false, nil
	t.resumePrompt, t.steerPrompt = "", ""
	// The per-call bookkeeping ends with the task: a resume starts it afresh.
	t.seenCalls, t.toolsRunning, t.yield = nil, nil, yieldNone
	m.touch(t)
	m.settleOnEnd(t)
	m.tmuxClose(t)
	m.notifyParent(t)
	if !t.quiet {
		m.toastEnding(t)
	}
	m.releaseWaiters(t)
	if t.SessionID != "" {
		m.forgetHeadless(t.SessionID) // a held child: nothing its task waited for matters now
	}
	m.startQueued()
}

// batchProgress counts the finished and all tasks of t's batch, and those still running. Launches
// of the batch still waiting (for an agent list, or a worker's health) count as running: a child
// can finish before its siblings exist.
func (m *Machine) batchProgress(t *run) (done, total, running int) {
	for _, b := range m.batch(t.BatchID) {
		total++
		if b.Status.Terminal() {
			done++
		} else {
			running++
		}
	}
	n := m.launchesInFlight(t.BatchID)
	return done, total + n, running + n
}

// launchesInFlight counts the batch's launches that have no task yet: they wait for the agent
// list, a worker's, or the health of the worker they name.
func (m *Machine) launchesInFlight(batch string) int {
	n := 0
	for _, l := range append(append([]*launch(nil), m.agentWaiters...), m.workerAgentWaiters()...) {
		if batchID(l.sessionID, l.messageID) == batch {
			n++
		}
	}
	for _, p := range m.pending {
		if l := p.launch; l != nil && batchID(l.sessionID, l.messageID) == batch {
			n++
		}
	}
	return n
}

// notifyParent owes the parent the spec's two-part notice of t's end: a visible line for the user
// and a synthetic part for the model, which carries the result so the parent needs no tool call
// to read it. The notice goes through the outbox (outbox.go), which keeps it owed until OpenCode
// has accepted it.
//
// Every parent model turn re-reads the whole conversation, so by default a notice wakes the
// parent only when its batch is done or a task failed; the others are stored with noReply, and
// wait while the parent is busy.
func (m *Machine) notifyParent(t *run) {
	if m.commitFirst(t) { // the notice tells what the task changed (worktree_tasks.go)
		return
	}
	if t.ParentSessionID == "" || t.quiet {
		return
	}
	m.owe(t)
	m.post(t.ParentSessionID, m.endNotice(t))
}

// endNotice is the notice of t's end, as things stand now. An isolated task's is written again
// when it goes, with the progress of its end (worktree_notice.go).
func (m *Machine) endNotice(t *run) notice {
	var c batchCounts
	c.done, c.total, c.running = m.batchProgress(t)
	return notice{
		tasks: []noticeTask{{ID: t.ID, OwedAt: t.NoticeOwed}},
		wake:  m.shouldWake(t, c.running),
		agent: t.ParentAgent,
		end:   &c,
		parts: m.endParts(t, c),
	}
}

// batchCounts are the finished, all and running tasks of a batch (batchProgress).
type batchCounts struct{ done, total, running int }

// endParts are the two parts of t's end notice: the user's line and the model's.
func (m *Machine) endParts(t *run, c batchCounts) []TextPart {
	return []TextPart{
		{Type: "text", Text: m.visibleNotice(t, c.done, c.total)},
		{Type: "text", Text: m.hiddenNotice(t, c.total, c.running), Synthetic: true},
	}
}

// shouldWake decides whether a notice costs the parent a model turn.
func (m *Machine) shouldWake(t *run, running int) bool {
	switch {
	case t.Status == task.StatusCancelled && m.holdsTurnOf(t.ParentSessionID):
		// A session whose turn end waits for its own tasks has nothing to answer in a cancel
		// (resultQueued), whatever the setting: it asked for it, or its other results will wake it.
		return false
	case m.cfg.Notify.Wake == config.WakeEach:
		return true
	case t.Status == task.StatusError:
		return true // a failure may change the plan: tell the parent at once
	case t.Status == task.StatusCancelled:
		return false // the parent cancelled it, and its cancel call already answered
	default:
		return running == 0
	}
}

// onParentStatus follows whether a session that may receive notices is busy. A session running a
// tool call is busy by definition; an idle one gets the notices held for it.
func (m *Machine) onParentStatus(sessionID string, busy bool) {
	if busy {
		m.busy[sessionID] = true
		return
	}
	delete(m.busy, sessionID)
	if m.outbox.Get(sessionID) != nil {
		m.markReady(sessionID)
	}
}
