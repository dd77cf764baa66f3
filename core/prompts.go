package core

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/history"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/core/text"
)

// Every word a model or a user reads from the core lives in the prompts files: this one (the
// notices, the toasts, the stall warning, the errors), prompts_tools.go (the tools' descriptions),
// prompts_answers.go (the tools' answers), prompts_controls.go (cascade, budgets, queues) and
// prompts_steer.go (steering, compaction, permissions). The code that decides calls these; a
// reader looking for what a model sees finds it there.

// --- Notices: what a parent session is told when a task ends. ---

// visibleNotice is the notice's line for the user. With notify.format "markdown" it is the spec's
// text exactly; by default the same words without the spec's bold, which OpenCode's TUI would
// show as asterisks (a user message is plain text there).
func (m *Machine) visibleNotice(t *run, done, total int) string {
	icon := map[task.Status]string{task.StatusCompleted: "✓", task.StatusError: "✗", task.StatusCancelled: "⊘"}[t.Status]
	var head string
	if t.ResumeCount > 0 {
		verb := map[task.Status]string{task.StatusCompleted: "completed in", task.StatusError: "failed in", task.StatusCancelled: "cancelled after"}[t.Status]
		head = fmt.Sprintf("Resume #%d %s %s.", t.ResumeCount, verb, text.Duration(m.noticeDuration(t)))
	} else {
		verb := map[task.Status]string{task.StatusCompleted: "finished in", task.StatusError: "failed in", task.StatusCancelled: "cancelled after"}[t.Status]
		head = fmt.Sprintf("Agent %q %s %s%s.", t.Description, verb, text.Duration(history.Duration(&t.Task, m.now)), workerSuffix(&t.Task))
	}
	text := fmt.Sprintf("%s %s\nTask Progress: %d/%d", icon, m.bold(head), done, total)
	if line := fallbackLine(t); line != "" {
		text += "\n" + line
	}
	for _, line := range m.worktreeLines(t) { // isolated tasks: branch, files, overlap
		text += "\n" + line
	}
	if m.cfg.Development {
		text += "\n[hint attached]"
	}
	return text
}

// bold is s in the spec's bold with notify.format "markdown", else s as it is.
func (m *Machine) bold(s string) string {
	if m.cfg.Notify.Format == config.FormatMarkdown {
		return "**" + s + "**"
	}
	return s
}

func (m *Machine) hiddenNotice(t *run, total, running int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Background task %s.\n%sagent: %s\ndescription: %s\nstatus: %s\n\n", t.Status, t.idLines(), t.Agent, t.Description, t.Status)
	b.WriteString(m.worktreeBlock(t))
	switch t.Status {
	case task.StatusCompleted:
		b.WriteString("<task_result>\n")
		b.WriteString(escapeMarkup(m.cutResult(t)))
		b.WriteString("\n</task_result>\n\n")
	case task.StatusError:
		if t.Error != nil {
			fmt.Fprintf(&b, "error_type: %s\nerror: %s\n\n", t.Error.Name, escapeMarkup(t.Error.Message))
		}
		b.WriteString(partialText(t))
	case task.StatusCancelled:
		if t.CancelReason != "" {
			fmt.Fprintf(&b, "reason: %s\n\n", t.CancelReason)
		}
		b.WriteString(partialText(t))
	}
	// The result is above: only a cut one says to call asyncagents_output, in its cut line.
	if running > 0 {
		b.WriteString("You can continue working or just say 'waiting' and halt.\n")
		b.WriteString("WATCH OUT for leftovers, you will likely WANT to wait for all agents to complete.")
	} else {
		fmt.Fprintf(&b, "All %s finished.", text.CountOf(total, "task", "tasks"))
	}
	b.WriteString("\n\n")
	b.WriteString(m.usageBlock(t))
	return b.String()
}

// usageBlock is what the task spent, for the notice's hidden part: its tokens and cost over all
// its runs (when OpenCode reported them), its tool calls, and the time the notice's head gives.
func (m *Machine) usageBlock(t *run) string {
	var b strings.Builder
	b.WriteString("<usage>\n")
	if tok := t.Tokens; tok != nil {
		fmt.Fprintf(&b, "input_tokens: %d\noutput_tokens: %d\nreasoning_tokens: %d\ncache_read_tokens: %d\ncache_write_tokens: %d\n",
			tok.Input, tok.Output, tok.Reasoning, tok.CacheRead, tok.CacheWrite)
	}
	if t.Cost != 0 {
		fmt.Fprintf(&b, "cost: %s\n", text.Cost(t.Cost))
	}
	if t.Steps > 0 {
		fmt.Fprintf(&b, "model_calls: %d\n", t.Steps)
	}
	fmt.Fprintf(&b, "tool_calls: %d\nduration_ms: %d\n</usage>", t.Progress.ToolCalls, m.noticeDuration(t))
	return b.String()
}

// noticeDuration is the time a notice reports: a resume's own, else the task's. Both end at the
// task's end, which a notice a restore sends again (outbox.go) comes well after.
func (m *Machine) noticeDuration(t *run) int64 {
	if t.ResumeCount > 0 {
		end := m.now
		if t.Status.Terminal() && t.CompletedAt != 0 {
			end = t.CompletedAt
		}
		return end - t.ResumedAt
	}
	return history.Duration(&t.Task, m.now)
}

// usageLine is a task's spending in a few words ("12.3k tokens (10k in, 2.3k out), $0.0123"), or
// "" while OpenCode has reported none.
func usageLine(t *task.Task) string {
	tok, cost := t.Usage()
	if t.Tokens == nil && cost == 0 {
		return ""
	}
	s := fmt.Sprintf("%s tokens (%s in, %s out", text.Count(tok.Total()), text.Count(tok.Input), text.Count(tok.Output))
	if tok.Reasoning > 0 {
		s += ", " + text.Count(tok.Reasoning) + " reasoning"
	}
	if c := tok.CacheRead + tok.CacheWrite; c > 0 {
		s += ", " + text.Count(c) + " cache"
	}
	s += ")"
	if cost != 0 {
		s += ", " + text.Cost(cost)
	}
	return s
}

// cutResult bounds the result carried in a notice, counting characters (runes), not bytes.
func (m *Machine) cutResult(t *run) string {
	r := t.Result
	if r == "" {
		return "(the subagent returned no text)"
	}
	limit := m.cfg.MaxResultChars
	total := utf8.RuneCountInString(r)
	if total <= limit {
		return r
	}
	cut, n := 0, 0
	for i := range r {
		if n == limit {
			cut = i
			break
		}
		n++
	}
	return fmt.Sprintf("%s\n\n[result cut at %d of %d characters; call asyncagents_output(task_id=%q, offset=%d) for the rest, in parts]", r[:cut], limit, total, t.ID, limit)
}

// fallbackLine is the notice's line naming the model that answered after a fallback.
func fallbackLine(t *run) string {
	info := t.FallbackInfo
	if info == nil || !info.Occurred {
		return ""
	}
	var failed []string
	for _, a := range info.Attempts {
		if !a.Success && a.Model != info.SuccessfulModel {
			failed = append(failed, fmt.Sprintf("%s (%s)", a.Model, a.Class))
		}
	}
	for _, s := range info.Skipped {
		failed = append(failed, s+" (circuit open)")
	}
	if info.SuccessfulModel == "" {
		return "Models tried: " + strings.Join(failed, ", ")
	}
	return fmt.Sprintf("Model: %s (fallback after %s)", info.SuccessfulModel, strings.Join(failed, ", "))
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// --- Toasts: what OpenCode's TUI shows when a task or a batch ends. ---

// taskToast is a task's ending as a toast: its description, and how long it ran or why it
// failed.
func taskToast(t *run, ms int64) (variant, title, message string) {
	what := "Agent"
	if t.ResumeCount > 0 {
		what = fmt.Sprintf("Resume #%d of", t.ResumeCount)
	}
	title = fmt.Sprintf("%s %q", what, t.Description)
	switch t.Status {
	case task.StatusError:
		msg := "failed"
		if t.Error != nil {
			msg = firstLine(t.Error.Message)
		}
		return ToastError, title + " failed", fmt.Sprintf("after %s: %s", text.Duration(ms), msg)
	case task.StatusCancelled:
		return ToastInfo, title + " cancelled", "after " + text.Duration(ms)
	}
	return ToastSuccess, title + " finished", "in " + text.Duration(ms)
}

// batchToast is a batch's ending as a toast: how its tasks ended.
func batchToast(done, failed, cancelled int) (variant, title, message string) {
	message = fmt.Sprintf("%d completed", done-failed-cancelled)
	if failed > 0 {
		message += fmt.Sprintf(", %d failed", failed)
	}
	if cancelled > 0 {
		message += fmt.Sprintf(", %d cancelled", cancelled)
	}
	title = text.CountOf(done, "background task", "background tasks") + " done"
	if failed > 0 {
		return ToastError, title, message
	}
	return ToastSuccess, title, message
}

// --- The stall warning (liveness.go). ---

// stallText is the one line that tells of a stalled task: the parent's visible notice, the
// reminders in the log, and any other place a stall is shown in short.
func (m *Machine) stallText(t *run) string {
	return fmt.Sprintf("⚠ Agent %q has made no progress for %s", t.Description, text.Silence(m.now-t.StalledSince))
}

// stallToast is a stall as a TUI toast: the same words as the notice's visible line.
func (m *Machine) stallToast(t *run) (variant, title, message string) {
	return ToastWarning, fmt.Sprintf("Agent %q stalled", t.Description), fmt.Sprintf("no progress for %s", text.Silence(m.now-t.StalledSince))
}

// stallHidden is the stall notice's part for the model.
func (m *Machine) stallHidden(t *run) string {
	return fmt.Sprintf("Background task stalled.\n%sagent: %s\ndescription: %s\nstatus: running, no progress for %s (no new message part, and no tool at work)\n\nThe task is still running and may recover; no other notice comes until it finishes. To see what it did so far, call asyncagents_output(task_id=%q); to stop it, asyncagents_cancel(task_id=%q).",
		t.idLines(), t.Agent, t.Description, text.Silence(m.now-t.StalledSince), t.ID, t.ID)
}

// noticeRetry is the log's "trying again" after a refused notice (outbox.go).
func noticeRetry(delayMs int64) string { return "; trying again in " + text.Duration(delayMs) }

// markedID is the task ID with the spec's list marks: (resumed) when resumeCount > 0, (forked)
// when forked.
func markedID(t *task.Task) string {
	id := t.ID
	if t.ResumeCount > 0 {
		id += " (resumed)"
	}
	if t.IsForked {
		id += " (forked)"
	}
	return id
}

// idLines is how a tool answer or a notice names a task: its ID, then its child session's once
// it has one (what a user opens in the TUI). A task from before the IDs were the core's own has
// one ID for both.
func (t *run) idLines() string {
	if t.SessionID == "" || t.SessionID == t.ID {
		return "task_id: " + t.ID + "\n" + workerLine(&t.Task)
	}
	return "task_id: " + t.ID + "\nsession_id: " + t.SessionID + "\n" + workerLine(&t.Task)
}

// --- Tool errors and answers given inline, and the errors a task ends with (the files named
// call them). Names ending in Fmt are fmt formats; Prefix ones are followed by a cause. ---

const (
	// tool_cancel.go
	cancelNeedsTarget     = "asyncagents_cancel: give task_id, or all: true to cancel every running task of this session"
	cancelNotBoth         = "asyncagents_cancel: give task_id or all: true, not both"
	cancelledLineFmt      = "- %s %q after %s"
	cancelNothing         = "No running background tasks to cancel."
	cancelledManyFmt      = "Cancelled %s:\n%s" // "1 running task"
	cancelStartingOne     = "1 task still starting will be cancelled as soon as it exists."
	cancelStartingFmt     = "%d tasks still starting will be cancelled as soon as they exist."
	cancelNoTaskFmt       = "asyncagents_cancel: no background task has task_id %s; call asyncagents_list to see this session's tasks"
	cancelOtherSessionFmt = "asyncagents_cancel: task %s belongs to another session; only its own session can cancel it"
	cancelEndedFmt        = "asyncagents_cancel: task %s already ended (%s); nothing was cancelled"
	cancelledOneFmt       = "Cancelled task %s %q after %s."
	cancelledQueuedFmt    = "Cancelled task %s %q; it was still queued and never started."
	// outbox.go (the log's, not a conversation's)
	noticeRefusedFmt     = "could not deliver the notice of task %s to its parent: %s"
	noticeCheckFailedFmt = "could not read the messages of session %s, to see which of the notices owed to it arrived before the restart: %s"
	noticeGiveUpFmt      = "; gave up after %d tries (the notice stays owed: the next start delivers it)"
	noticeParentGoneFmt  = "session %s is gone (deleted while the notices of its tasks %s were owed): its tasks are forgotten, as when OpenCode says a parent session was deleted"
	// tool_list.go
	listNone     = "No background tasks found"
	listHeadFmt  = "Background tasks of this session (%d):\n%s"
	clearedFmt   = "Cleared %s." // "1 finished task"
	clearKeptOne = " 1 running task was kept and keeps running; cancel it with asyncagents_cancel."
	clearKeptFmt = " %d running tasks were kept and keep running; cancel them with asyncagents_cancel."
	// tool_output.go
	outputNoTaskID      = "asyncagents_output: argument task_id is missing or empty"
	outputBadTimeoutFmt = "asyncagents_output: argument timeout must be a number of seconds above 0 and at most %g, not %g"
	outputNoTaskFmt     = "asyncagents_output: no background task has task_id %s; task IDs are the full IDs returned by asyncagents_task"
	// output_page.go
	outputBadOffsetFmt     = "asyncagents_output: argument offset must be a whole number of characters, 0 or more, not %g"
	outputBadLimitFmt      = "asyncagents_output: argument limit must be a whole number of characters from 1 to %d, not %g"
	outputOffsetPastEndFmt = "asyncagents_output: argument offset %d is past the end of the result, which has %d characters"
	outputPartFmt          = "result: characters %d to %d of %d\n"
	outputNextPartFmt      = "[%d characters more; call asyncagents_output(task_id=%q, offset=%d) for the next part]"
	// tool_task.go
	argTypeFmt         = "argument %s must be a %s, not a %s"
	argsUnknownFmt     = "unknown argument %s; the arguments are %s"
	argKeysUnknownFmt  = "argument %s has no key %s; its keys are %s"
	argsNotObjectFmt   = "arguments are not a JSON object: %v"
	taskArgMissingFmt  = "asyncagents_task: argument %s is missing or empty; no task was created"
	taskArgsMissingFmt = "asyncagents_task: arguments %s are missing or empty; no task was created"
	// A task another OpenCode process on the project launched (history_files.go): shown by the
	// status API, acted on by that process alone.
	foreignTaskFmt       = "task %s belongs to another OpenCode process on this project; use it (or its status API) there. Nothing was done."
	apiForeignCancelFmt  = "task %s belongs to another OpenCode process on this project: cancel it there; nothing was cancelled"
	taskNestingFmt       = "asyncagents_task: nesting limit reached: this session runs inside a background task %s deep, and tasks may nest %d deep; do the work here instead. No task was created."
	taskAgentsUnlisted   = "asyncagents_task: could not list OpenCode's agents: "
	taskAgentsUnreadable = "asyncagents_task: OpenCode's agent list was unreadable; no task was created"
	taskUnknownAgentFmt  = "asyncagents_task: unknown agent %s; available agents: %s. No task was created."
	taskPrimaryAgentFmt  = "asyncagents_task: agent %s is a primary agent and cannot run as a background subagent; available agents: %s. No task was created."
	taskDeniedAgentFmt   = "asyncagents_task: agent %s may not launch agent %s (its permission.task rules deny it); agents it may launch: %s. No task was created."
	taskNoAgentAllowed   = "none"
	pendingExpiredFmt    = "no answer from the host after %s"
	childSessionTitleFmt = "%s (@%s subagent)"
	sessionErrorPrefix   = "could not create the child session: "
	promptErrorPrefix    = "OpenCode refused the prompt: "
	// resume.go
	resumeWithFork           = "fork and resume are mutually exclusive: fork starts a new task with this session's context, resume continues an existing task; no task was changed"
	resumeNoPrompt           = "argument prompt is missing or empty: a resume needs the follow-up prompt; no task was changed"
	resumeNoTaskFmt          = "no background task has task_id %s to resume; start one with asyncagents_task(description, prompt, agent)"
	resumeOtherSessionFmt    = "task %s belongs to another session; only its own session can resume it"
	resumeUnderWayFmt        = "a resume of task %s is already under way (resume #%d); wait for its notice, then resume again"
	resumeNotCompletedFmt    = "only a completed task can be resumed; task %s is %s. Start a new task with asyncagents_task instead"
	resumeClearedFmt         = "asyncagents_task: task %s was cleared before it could be resumed; start a new task with asyncagents_task"
	resumeSessionGoneFmt     = "asyncagents_task: the session of task %s no longer exists (%s); start a new task with asyncagents_task(description, prompt, agent) instead"
	resumeNotCompletedNowFmt = "asyncagents_task: task %s is %s now; only a completed task can be resumed"
	resumeTitleFmt           = "resume #%d: %s"
	// tools.go
	abortedWaitingPrefix = "aborted while waiting for task "
	unknownToolPrefix    = "unknown tool "
	// fork.go
	forkReadErrorPrefix    = "could not read the parent's conversation: "
	forkProcessErrorPrefix = "could not process the parent's conversation: "
	forkRefusedPrefix      = "OpenCode refused the forked context: "
	// history_reconcile.go
	interruptedGonePrefix = "interrupted: the child session is gone ("
	interruptedStopped    = "interrupted: OpenCode stopped while the task ran"
	// messages.go
	noAnswer = "the subagent stopped without answering"
	// polledNoAnswerFmt: a polled worker's child idle with no answer to its prompt; why, only its
	// session there says (names the worker).
	polledNoAnswerFmt = "the subagent on worker %s stopped without answering its prompt; the worker is polled, so its error was not heard: its child session there says why"
	// prompt_dropped.go
	promptDroppedFmt = "task %s: OpenCode accepted the child's prompt but has not started it in %d s, with the session idle; sending it again"
	// fallback.go
	compactErrorPrefix = "could not compact the session: "
	attemptTimeoutFmt  = "no activity from %s for %s"
	// liveness.go
	timedOutFmt = "timed out after %s"
	// tool_task.go
	taskBadTimeoutFmt = "asyncagents_task: argument timeout must be a number of seconds above 0 and at most a year, not %g; no task was created"
	// allModelsFailedFmt is the error of a task whose every model failed: the attempts, then
	// each attempt's error in order, joined by " | " (seed 002's words, which users may match).
	allModelsFailedFmt = "All fallback models failed after %s. %s"
	// resume.go
	resumeQueuedFmt = "\n\nThe follow-up waits for a start slot: %s. It is sent when one frees."
	// resumeLostMessage fails a resume that waited for a slot when the process stopped: its
	// follow-up lived in that process only.
	resumeLostMessage = "the follow-up waited for a start slot when OpenCode stopped, and was not kept; resume the task again"
	resumedFmt        = `%sagent: %s
description: %s
status: resumed
resume: #%d

The follow-up runs in the task's own session, with its whole conversation. Its answer arrives in this conversation as a notice (Resume #%d); to wait for it now, call asyncagents_output(task_id="%s", block=true).`
)
