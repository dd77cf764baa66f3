package view

import (
	"strings"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/core/text"
)

// TaskOf is how the dashboard shows t beside its record at now: the status as a word, the budget
// as a line, its duration, tokens and cost, where it waits in a queue, what the child waits for
// permission to do. The status API puts it in every task it writes (its answers and its event
// stream), so the page decides and formats none of it.
func TaskOf(t *task.Task, now int64) *task.View {
	v := &task.View{Label: label(t), Budget: Budget(t), Attempts: attempts(t), Duration: text.Duration(t.Duration(now)), Worker: t.Worker}
	tok, cost := t.Usage()
	if t.Tokens != nil {
		v.Tokens = text.Count(tok.Total())
	}
	if cost != 0 {
		v.Cost = text.Cost(cost)
	}
	if t.Queued || t.Waiting != nil { // a task whose held child waits for its slot back too
		v.Queue = Waiting(t.Waiting)
	}
	h := HoldOf(t)
	if p := h.Permission; p != nil {
		v.Permission, v.PermissionAt, v.PermissionID = p.What(), p.At, p.ID
		v.PermissionWait = text.Duration(max(now-p.At, 0))
	}
	if h.Retry != nil {
		v.Retry = Retrying(h.Retry)
	}
	if w := t.Worktree; w != nil {
		for _, f := range w.Files {
			v.Changes = append(v.Changes, text.LineCounts(f.Added, f.Removed))
		}
	}
	return v
}

// Hold is what holds a task at work, decided once for the tools' answers, the terminal UI's rows
// and the dashboard: the permission its child asks the user for, the model call OpenCode
// retries, since when it has made no progress (0: it has not stalled). All zero once the task
// ended: a note of a task that ended would tell what no longer is.
type Hold struct {
	Permission   *task.PermissionRequest
	Retry        *task.Retry
	StalledSince int64
}

// HoldOf is t's Hold.
func HoldOf(t *task.Task) Hold {
	if t.Status.Terminal() {
		return Hold{}
	}
	return Hold{Permission: t.WaitingPermission(), Retry: t.Retry, StalledSince: t.StalledSince}
}

// label is the status as a page names it: a running task that waits for a slot is queued, one
// whose child waits for the user's permission is waiting, and an error is a failure.
func label(t *task.Task) string {
	switch {
	case t.Status == task.StatusError:
		return labelFailed
	case t.Status.Terminal():
		return string(t.Status)
	case t.Queued:
		return labelQueued
	case t.WaitingPermission() != nil:
		return labelWaiting
	}
	return string(t.Status)
}

// Budget is the usage against t's budget: "2 of 3 model calls · 1.2k of 5k tokens · $0.01 of
// $0.50", "" for a task without one.
func Budget(t *task.Task) string {
	g := t.Budget
	if g == nil {
		return ""
	}
	var parts []string
	if g.Steps > 0 {
		parts = append(parts, budgetSteps(t.Steps, g.Steps))
	}
	if g.Tokens > 0 {
		tok, _ := t.Usage()
		parts = append(parts, budgetTokens(text.Count(tok.Total()), text.Count(g.Tokens)))
	}
	if g.CostUsd > 0 {
		parts = append(parts, budgetCost(text.Cost(t.Cost), text.Cost(g.CostUsd)))
	}
	return strings.Join(parts, " · ")
}
