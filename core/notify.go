package core

import (
	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

// finish moves a task to a terminal status exactly once, then tells the parent and answers every
// asyncagents_output call blocked on it.
func (m *Machine) finish(t *run, status task.Status, result string, taskErr *task.TaskError) {
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
	t.Queued, t.Waiting, t.refill = false, nil, false
	t.resumePrompt = ""
	// The per-call bookkeeping ends with the task: a resume starts it afresh.
	t.seenCalls, t.toolsRunning = nil, nil
	m.touch(t)
	m.tmuxClose(t)
	m.notifyParent(t)
	if !t.quiet {
		m.toastEnding(t)
	}
	m.releaseWaiters(t)
	m.startQueued()
}

// batchProgress counts the finished and all tasks of t's batch, and those still running. Launches
// of the batch still waiting for the agent list count as running: a child can finish before its
// siblings exist.
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

// launchesInFlight counts the batch's launches that have no task yet (they wait for the agent
// list).
func (m *Machine) launchesInFlight(batch string) int {
	n := 0
	for _, l := range m.agentWaiters {
		if batchID(l.sessionID, l.messageID) == batch {
			n++
		}
	}
	return n
}

// notifyParent sends the spec's two-part notice: a visible line for the user and a synthetic
// part for the model, which carries the result so the parent needs no tool call to read it.
//
// Every parent model turn re-reads the whole conversation, so by default a notice wakes the
// parent only when its batch is done or a task failed; the others are stored with noReply. A
// noReply message sent to a busy session still costs a turn in OpenCode 1.18, so those wait
// until the parent is idle.
func (m *Machine) notifyParent(t *run) {
	if t.ParentSessionID == "" || t.quiet {
		return
	}
	done, total, running := m.batchProgress(t)
	wake := m.shouldWake(t, running)
	n := heldNotice{taskID: t.ID, effect: Effect{
		Kind:      EffectPromptAsync,
		Notice:    true,
		TaskID:    t.ID,
		SessionID: t.ParentSessionID,
		Agent:     t.ParentAgent,
		NoReply:   !wake,
		Parts: []TextPart{
			{Type: "text", Text: m.visibleNotice(t, done, total)},
			{Type: "text", Text: m.hiddenNotice(t, total, running), Synthetic: true},
		},
	}}
	parent := t.ParentSessionID
	if !wake && m.busy[parent] {
		m.held[parent] = append(m.held[parent], n)
		return
	}
	m.flushHeld(parent) // earlier notices first
	m.sendNotice(n)
}

// heldNotice is a notice waiting for its parent to go idle. stalledSince is set on a stall's
// notice: the stall it tells of (liveness.go).
type heldNotice struct {
	taskID       string
	stalledSince int64
	effect       Effect
}

func (m *Machine) sendNotice(n heldNotice) {
	m.request(n.effect, pending{taskID: n.taskID, notice: true})
}

// flushHeld delivers the notices held for a parent, in order.
func (m *Machine) flushHeld(parent string) {
	held := m.held[parent]
	delete(m.held, parent)
	for _, n := range held {
		if n.stalledSince != 0 {
			if t := m.task(n.taskID); t == nil || t.StalledSince != n.stalledSince {
				continue // the stall is over (or the task ended): the notice would mislead
			}
		}
		m.sendNotice(n)
	}
}

// shouldWake decides whether a notice costs the parent a model turn.
func (m *Machine) shouldWake(t *run, running int) bool {
	switch {
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
	m.flushHeld(sessionID)
}
