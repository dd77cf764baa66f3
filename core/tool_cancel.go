package core

import (
	"fmt"
	"slices"
	"strings"

	"github.com/asyncagents/asyncagents/core/history"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/core/text"
)

// cancelArgs are asyncagents_cancel's arguments.
type cancelArgs struct {
	TaskID string `json:"task_id"`
	All    bool   `json:"all"`
	Reason string `json:"reason"`
}

func (m *Machine) onCancelCall(ev Event) {
	var a cancelArgs
	if err := parseArgs(ev.Args, &a); err != nil {
		m.failTool(ev.CallID, "asyncagents_cancel: "+err.Error())
		return
	}
	a.TaskID = strings.TrimSpace(a.TaskID)
	a.Reason = strings.TrimSpace(a.Reason)
	switch {
	case a.TaskID == "" && !a.All:
		m.failTool(ev.CallID, cancelNeedsTarget)
		return
	case a.TaskID != "" && a.All:
		m.failTool(ev.CallID, cancelNotBoth)
		return
	}
	if a.All {
		var lines []string
		m.stopTogether(func() {
			for _, id := range m.order {
				t := m.sessionTask(id, ev.SessionID)
				if t != nil && !t.Status.Terminal() {
					m.cancel(t, a.Reason)
					lines = append(lines, fmt.Sprintf(cancelledLineFmt, t.ID, t.Description, text.Duration(history.Duration(&t.Task, m.now))))
				}
			}
		})
		// Launches still waiting for the agent list are cancelled as soon as they are tasks.
		starting := m.cancelLaunches(ev.SessionID, a.Reason, false)
		if len(lines) == 0 && starting == 0 {
			m.replyTool(ev.CallID, cancelNothing, map[string]any{"title": "nothing to cancel"})
			return
		}
		var out []string
		if len(lines) > 0 {
			out = append(out, fmt.Sprintf(cancelledManyFmt, text.CountOf(len(lines), "running task", "running tasks"), strings.Join(lines, "\n")))
		}
		if starting > 0 {
			out = append(out, cancelStarting(starting))
		}
		m.replyTool(ev.CallID, strings.Join(out, "\n"), map[string]any{"title": "cancelled " + text.CountOf(len(lines)+starting, "task", "tasks")})
		return
	}
	t := m.task(a.TaskID)
	switch {
	case t == nil && m.foreign(a.TaskID) != nil:
		m.failTool(ev.CallID, fmt.Sprintf(foreignTaskFmt, quote(a.TaskID)))
	case t == nil:
		m.failTool(ev.CallID, fmt.Sprintf(cancelNoTaskFmt, quote(a.TaskID)))
	case t.ParentSessionID != ev.SessionID:
		m.failTool(ev.CallID, fmt.Sprintf(cancelOtherSessionFmt, t.ID))
	case t.Status.Terminal():
		m.failTool(ev.CallID, fmt.Sprintf(cancelEndedFmt, t.ID, t.Status))
	default:
		wasQueued := t.Queued
		m.cancel(t, a.Reason)
		msg := fmt.Sprintf(cancelledOneFmt, t.ID, t.Description, text.Duration(history.Duration(&t.Task, m.now)))
		if wasQueued {
			msg = fmt.Sprintf(cancelledQueuedFmt, t.ID, t.Description)
		}
		m.replyTool(ev.CallID, msg, t.metadata("cancelled "+t.Description))
	}
}

// cancel stops a running or queued task: the child is aborted (a queued one never started), the
// status is set before anything else so a completion racing in finds the task ended. The tasks
// its child launched are cancelled with it, all the way down, without a notice each (their
// parent is gone); it returns them.
func (m *Machine) cancel(t *run, reason string) (below []*run) {
	m.stopTogether(func() { below = m.cancelOne(t, reason) })
	return below
}

func (m *Machine) cancelOne(t *run, reason string) []*run {
	t.CancelReason = reason
	return m.stop(t, task.StatusCancelled, nil, t.SessionID != "", reason)
}

// stop is the one way a task is stopped before its child ends it (a cancel, a budget, its parent
// session deleted): it ends in finish first, so a completion racing in finds it ended, then its
// child is aborted (a queued one never started; one whose session is still being created has
// nothing to abort: the session is deleted when it arrives, onSessionCreated). With below, the
// tasks its child launched are cancelled with it, all the way down, for belowReason; it returns
// them.
func (m *Machine) stop(t *run, status task.Status, taskErr *task.TaskError, below bool, belowReason string) []*run {
	started := !t.Queued && t.SessionID != ""
	if started {
		m.holdForAbort(t)
	}
	m.end(t, status, "", taskErr)
	if started {
		m.request(Effect{Kind: EffectAbort, SessionID: t.SessionID, TaskID: t.ID}, pending{taskID: t.ID})
	}
	if !below || t.SessionID == "" {
		return nil
	}
	m.cancelLaunches(t.SessionID, belowReason, true) // they become tasks only to be cancelled
	return m.cancelBelow(t.SessionID, belowReason)
}

// cancelStarting says how many launches without a task yet will be cancelled.
func cancelStarting(n int) string {
	if n == 1 {
		return cancelStartingOne
	}
	return fmt.Sprintf(cancelStartingFmt, n)
}

// cancelLaunches marks the session's launches that have no task yet (they wait for the agent
// list, or for their worker's health); each is cancelled as soon as it has one. With below, those
// of the subagents below it too (an interrupted turn's, as cancelBelow). It returns how many there
// were.
func (m *Machine) cancelLaunches(sessionID, reason string, below bool) int {
	n := 0
	for _, l := range m.startingLaunches() {
		if (l.sessionID == sessionID || (below && m.sessionUnder(l.sessionID, sessionID))) && !l.cancelled {
			l.cancelled, l.cancelReason = true, reason
			n++
		}
	}
	return n
}

// startingLaunches are the launches that have no task yet, in the order they came: those waiting
// for the agent list, then those waiting for a worker's list, then those waiting for their
// worker's health check (a launch waits for one at a time).
func (m *Machine) startingLaunches() []*launch {
	out := append(append([]*launch(nil), m.agentWaiters...), m.workerAgentWaiters()...)
	ids := make([]int64, 0, len(m.pending))
	for id, p := range m.pending {
		if p.launch != nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		out = append(out, m.pending[id].launch)
	}
	return out
}
