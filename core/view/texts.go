package view

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/core/text"
)

// The texts the terminal UI shows, with the other user-facing strings of the core.

// CommandSlash is the terminal UI's command (/tasks) that opens the list, CommandDescription
// what the command palette says of it, and Unavailable what the module says when the status API
// cannot be reached (the plugin is still starting, or its API is off). The module has these
// before any view is read, as constants (bridge/abi_types.gen.ts).
const (
	CommandSlash       = "tasks"
	CommandDescription = "List the background tasks of this project: open one's session, or cancel it"
	Unavailable        = "asyncagents: the status API is not reachable yet (or is off: ASYNCAGENTS_API_ENABLED=false)"
)

const (
	SectionTitle    = "Background tasks"
	SectionEmpty    = "No background tasks in this session"
	ListTitle       = "Background tasks"
	ListPlaceholder = "Filter · enter: open its session · ctrl+d: cancel it"
	ListEmpty       = "No background tasks in this project"
	CancelKey       = "ctrl+d"
	CancelKeep      = "Keep running"
	CancelConfirm   = "Cancel task"
	CancelReason    = "cancelled from OpenCode's terminal UI"
	noteOverBudget  = "over budget"
)

const (
	legendQueued  = "queued"
	legendStalled = "stalled"
	// legendPermission names the time a task waited for the user's permission.
	legendPermission = "waiting for permission"
)

func segmentQueued(d string) string  { return "queued for " + d }
func segmentStalled(d string) string { return "stalled for " + d }

func segmentPermission(d string) string { return "waited for permission for " + d }

func noteStalled(since string) string { return "stalled for " + since }

// retryMessageMax bounds the provider's error in a retry's note: a row has one line for it.
const retryMessageMax = 80

// Retrying is OpenCode's retry of a task's model call in a few words, for the rows' note, the
// dashboard and the tools' answers: "retrying (attempt 3): HTTP 500 Internal Server Error".
func Retrying(r *task.Retry) string {
	msg, _, _ := strings.Cut(strings.TrimSpace(r.Message), "\n")
	if n := utf8.RuneCountInString(msg); n > retryMessageMax {
		msg = string([]rune(msg)[:retryMessageMax-1]) + "…"
	}
	if msg == "" {
		return fmt.Sprintf("retrying (attempt %d)", r.Attempt)
	}
	return fmt.Sprintf("retrying (attempt %d): %s", r.Attempt, msg)
}

func notePermission(what string) string { return "waits for permission: " + what }

// Waiting says what a queued task waits for, in the tools' answers, the terminal UI's rows and
// on the dashboard: "position 2 in the queue of concurrency.models["a/b"], 1 at once".
func Waiting(w *task.Wait) string {
	if w == nil {
		return "waiting for a slot"
	}
	return fmt.Sprintf("position %d in the queue of %s, %d at once", w.Position, w.Limit, w.Max)
}

func started(ago string) string { return "started " + ago + " ago" }

func listNoMatch(query string) string { return fmt.Sprintf("No background task matches %q", query) }

func moreFinished(n int) string { return "+" + text.CountOf(n, "more finished", "more finished") }

func cancelPrompt(description string) string {
	return fmt.Sprintf("Cancel %q? Its child session is aborted and its parent is told.", description)
}

// A task's status as the dashboard names it, where it differs from the status (view/task.go).
const (
	labelQueued  = "queued"
	labelWaiting = "waiting"
	labelFailed  = "failed"
)

// How a model attempt went (view/attempts.go).
const (
	outcomeAnswered  = "answered"
	outcomeAtWork    = "at work"
	outcomeCancelled = "cancelled (the task was cancelled)"
	outcomeLeft      = "left for the next model"
)

func outcomeFailed(class string) string {
	if class == "" {
		return "failed"
	}
	return "failed (" + class + ")"
}

// outcomeStopped is an attempt the task ended under for its own reason (a timeout, a budget).
func outcomeStopped(why string) string { return "stopped: the task ended (" + why + ")" }

func budgetSteps(used, limit int) string {
	return fmt.Sprintf("%d of %s", used, text.CountOf(limit, "model call", "model calls"))
}
func budgetTokens(used, limit string) string { return used + " of " + limit + " tokens" }
func budgetCost(used, limit string) string   { return used + " of " + limit }

// AgentOn is the task's agent, with the worker it runs on when it is not local ("explore on
// worker w1").
func AgentOn(t *task.Task) string { return joinNonEmpty(" ", t.Agent, OnWorker(t.Worker)) }
