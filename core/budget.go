package core

import (
	"fmt"

	"github.com/asyncagents/asyncagents/core/budget"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/core/text"
)

// Budgets with an automatic stop. A task's budget is asyncagents_task's budget over the config's
// defaults (budget.steps, .tokens, .costUsd), field by field; budget.sessionCostUsd bounds all
// the tasks under one user's session together. Usage is counted from the child's own events: a
// step-finish part per model call, and the tokens and cost OpenCode writes on each assistant
// message. Past a limit the child is aborted and the task fails with the figures, keeping its
// partial work; what the child launched stops with it. The check runs at the end of each model
// call, so the overshoot is one model call at most. A call that ends the turn (finish "stop") is
// never stopped: its answer is the task's result, and the spending is already done.

// budgetArgs is asyncagents_task's budget argument (budget.Args).
type budgetArgs = budget.Args

// taskBudget is the budget a new task runs under, or an error naming the field that is wrong.
func (m *Machine) taskBudget(a *budgetArgs) (*task.Budget, error) {
	g, err := budget.For(m.cfg.Budget, a)
	if e, ok := err.(*budget.ArgError); ok {
		return nil, fmt.Errorf(budgetArgFmt, e.Field, e.Want, e.Got)
	}
	return g, err
}

// onStepFinished counts one model call of t's child, or of a subagent it runs (session: where
// the step-finish part is; once per part ID, and after a restart not again up to the record's
// mark) and stops the task when it has used its steps and the model goes on.
func (m *Machine) onStepFinished(t *run, session, partID, reason string) {
	mark := t.UsageMark(session)
	if t.stepsSeen[partID] || partID <= t.countedBefore(session).Step {
		return
	}
	if t.stepsSeen == nil {
		t.stepsSeen = map[string]bool{}
	}
	t.stepsSeen[partID] = true
	t.Steps++
	if partID > mark.Step {
		mark.Step = partID
		t.setUsageMark(mark)
	}
	m.touchProgress(t)
	// A polled task's end read counts what its child did before it went idle: its answer, if it
	// gave one, is the result, whatever it spent (workers_poll_progress.go); a subagent's whole
	// read counts what it did, perhaps before its child answered (workers_poll_subagents.go).
	if !t.countOnly && budget.StepsUsed(t.Budget, t.Steps, reason) {
		m.stopForBudget(t, fmt.Sprintf(budgetStepsFmt, text.CountOf(t.Steps, "step", "steps"), t.Budget.Steps))
	}
}

// checkSpending stops t when its tokens or cost passed its budget, or its session's tasks passed
// budget.sessionCostUsd; final is set when the message that reported it ended the turn.
func (m *Machine) checkSpending(t *run, final bool) {
	if t.Status.Terminal() || final {
		return // an answer that ends the turn is the result: the spending is done
	}
	if g := t.Budget; g != nil {
		tok, cost := t.Usage()
		switch budget.Spent(g, tok.Total(), cost) {
		case budget.Tokens:
			m.stopForBudget(t, fmt.Sprintf(budgetTokensFmt, text.CountOf(tok.Total(), "token", "tokens"), g.Tokens))
			return
		case budget.CostUsd:
			m.stopForBudget(t, fmt.Sprintf(budgetCostFmt, cost, g.CostUsd))
			return
		}
	}
	limit := m.cfg.Budget.SessionCostUsd
	if limit <= 0 {
		return
	}
	root := m.rootSession(t.ParentSessionID)
	if spent := m.sessionCost(root); budget.SessionPassed(limit, spent) {
		what := fmt.Sprintf(budgetSessionCostFmt, spent, limit)
		m.stopTogether(func() {
			for _, r := range m.activeTasks() {
				if m.rootSession(r.ParentSessionID) == root {
					m.stopForBudget(r, what)
				}
			}
		})
	}
}

// stopForBudget fails t with the limit it passed: its child is aborted (a queued task never
// started) and what the child launched is cancelled with it. One restored and not yet reconciled
// is left to its reconcile, which fails it so if it finds it still at work: it may have finished
// while OpenCode was down, and the stop would lose its result (orphans.go).
func (m *Machine) stopForBudget(t *run, what string) {
	if t.Status.Terminal() {
		return
	}
	if m.awaitingReconcile(t) {
		t.budgetOnReconcile = what
		return
	}
	m.failForBudget(t, what)
}

// failForBudget fails t for the limit it passed, now: a live task at once, a restored one once
// its reconcile found it still at work (orphans.go stopIfDue).
func (m *Machine) failForBudget(t *run, what string) {
	started := !t.Queued && t.SessionID != ""
	m.log("info", "task "+t.ID+": budget exceeded: "+what)
	m.stopTogether(func() {
		m.stop(t, task.StatusError, budgetExceeded(what), started, "its parent task's budget was exceeded")
	})
}

// rootSession is the user's session above session: a task's child session leads to its task's
// parent, a subagent's session to the session that ran it, and so on up.
func (m *Machine) rootSession(session string) string {
	return budget.Root(session, maxSessionHops*(m.cfg.MaxDepth+1), m.parentOf)
}

// maxSessionHops bounds the sessions walked up within one level of tasks: a task's child, and the
// subagents below it (as taskBelow's walk).
const maxSessionHops = 8

// parentOf is the session above session: a task's child's is its task's parent, a subagent's the
// session that ran it ("" for a user's session).
func (m *Machine) parentOf(session string) string {
	if t := m.task(session); t != nil {
		return t.ParentSessionID
	}
	return m.sessionsBelow.get(session)
}

// sessionCost is what every task under the user's session root has cost, nested ones included.
func (m *Machine) sessionCost(root string) float64 {
	var sum float64
	for _, id := range m.order {
		if t := m.tasks[id]; t != nil && t.Cost != 0 && m.rootSession(t.ParentSessionID) == root {
			sum += t.Cost
		}
	}
	return sum
}

// refuseOverBudget answers a launch (or resume) from a session whose tasks spent
// budget.sessionCostUsd; it reports whether it did.
func (m *Machine) refuseOverBudget(callID, session string) bool {
	limit := m.cfg.Budget.SessionCostUsd
	if limit <= 0 {
		return false
	}
	if spent := m.sessionCost(m.rootSession(session)); budget.SessionRefuses(limit, spent) {
		m.failTool(callID, fmt.Sprintf(budgetSessionRefusedFmt, spent, limit))
		return true
	}
	return false
}
