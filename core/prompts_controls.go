package core

import (
	"fmt"
	"strings"

	"github.com/asyncagents/asyncagents/core/history"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/core/text"
	"github.com/asyncagents/asyncagents/core/view"
)

// The texts of the controls: the cascade of an interrupted turn (cascade.go), the budgets
// (budget.go) and the concurrency queues (concurrency.go).

// cascadeToastTitle heads the toast of an interrupted turn's cancelled tasks.
const cascadeToastTitle = "Background tasks cancelled"

// cascadeVisible is the one ⊘ line a session whose turn ended (how: turnInterrupted or
// turnFailed) gets for all the tasks that stopped with it.
func (m *Machine) cascadeVisible(stopped []*run, how string) string {
	head := "Interrupted"
	if how == turnFailed {
		head = "Model failed"
	}
	names := make([]string, len(stopped))
	for i, t := range stopped {
		names[i] = fmt.Sprintf("%q", t.Description)
	}
	return fmt.Sprintf("⊘ %s (%s).", m.bold(fmt.Sprintf("%s: %s cancelled", head, text.CountOf(len(stopped), "background task", "background tasks"))), strings.Join(names, ", "))
}

// How a turn ended, for cascadeHidden: a subagent whose model failed may be resumed (OpenCode's
// task tool names its session for that), and then reads this.
const (
	turnInterrupted = "Your turn was interrupted"
	turnFailed      = "Your turn ended with a model error"
)

// cascadeHidden tells the model which tasks stopped with its turn, which ended how, and where
// their partial work is.
func (m *Machine) cascadeHidden(stopped []*run, how string) string {
	var b strings.Builder
	b.WriteString(how + ", so these background tasks were cancelled (and any tasks they had launched). Each keeps its partial work: asyncagents_output(task_id=...) shows it, and asyncagents_task(resume=...) continues one.\n\n")
	for _, t := range stopped {
		state := "cancelled after " + text.Duration(history.Duration(&t.Task, m.now))
		if t.SessionID == "" {
			state = "cancelled while queued, never started"
		}
		fmt.Fprintf(&b, "- %s %q (@%s): %s\n", t.ID, t.Description, t.Agent, state)
	}
	b.WriteString("\nLaunch again only what is still needed.")
	return b.String()
}

// budgetExceeded is a task's error when it passed a limit: "budget exceeded: 3 steps (limit 3)".
func budgetExceeded(what string) *task.TaskError {
	return &task.TaskError{Name: "BudgetExceeded", Message: "budget exceeded: " + what}
}

// Figures of the budgets, for their errors and their lines.
const (
	budgetStepsFmt       = "%s (limit %d)" // "1 step"
	budgetTokensFmt      = "%s (limit %d)" // "1 token"
	budgetCostFmt        = "$%.4f (limit $%.4f)"
	budgetSessionCostFmt = "this session's tasks cost $%.4f (limit budget.sessionCostUsd $%.4f)"
	// budgetSessionRefusedFmt refuses a launch from a session whose tasks spent their budget.
	budgetSessionRefusedFmt = "asyncagents_task: the background tasks of this session have cost $%.4f, past budget.sessionCostUsd ($%.4f); no task was created. Finish the work yourself, or ask the user to raise budget.sessionCostUsd in asyncagents.json."
	// budgetArgFmt names a budget field given a value it cannot take.
	budgetArgFmt = "asyncagents_task: budget.%s must be %s, got %v; no task was created"
)

// budgetLine is a task's usage against its budget, for asyncagents_list and asyncagents_output,
// as the dashboard shows it (core/view): "budget: 2 of 3 model calls · 1.2k of 5k tokens · $0.01
// of $0.50". Empty for a task without a budget.
func budgetLine(t *task.Task) string {
	if b := view.Budget(t); b != "" {
		return "budget: " + b
	}
	return ""
}

// headlessHoldFmt is the log line of a headless run's turn held for its session's tasks (headless.go).
const headlessHoldFmt = "asyncagents: session %s waits for its background tasks before its turn ends"
