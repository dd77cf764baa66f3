package core

import (
	"slices"

	"github.com/asyncagents/asyncagents/core/errclass"
	"github.com/asyncagents/asyncagents/core/history"
	"github.com/asyncagents/asyncagents/core/task"
)

// run is a task as the machine holds it: the record (task.Task, what the hosts, the status API
// and the history see) and what the machine keeps of the run beside it, which never leaves it.
type run struct {
	task.Task

	// creating: the child session is being created (session.create sent, no answer yet).
	creating bool
	// restoring: a task on a worker restored from the history, reconciled once that worker's
	// stream is up (workers.go).
	restoring bool
	// unbound: restored at work with no session, though OpenCode may have made one: its
	// parent's children are read for it before one is made (history_reconcile_children.go),
	// childReads counting the reads that failed.
	unbound    bool
	childReads int
	// cancelOnReconcile: a cancel reached it before its reconcile did (cascade.go cancelBelow),
	// with this reason; its reconcile cancels it if it finds it still at work (orphans.go).
	cancelOnReconcile string
	// budgetOnReconcile: a budget stop reached it before its reconcile did (budget.go
	// stopForBudget), naming the limit passed; its reconcile fails it for that if it finds it still
	// at work, unless a cancel is due as well (orphans.go dueStop).
	budgetOnReconcile string
	// polledBusyAt: when a poll of its worker last found it busy, its activity on a polled
	// worker (workers_poll.go).
	polledBusyAt int64
	// polledReadAt: when its newest messages were last read for its progress; polledSeeded: it
	// was restored with calls counted, which its reads show again (workers_poll_progress.go).
	polledReadAt int64
	polledSeeded bool
	// polledSubs: the subagents its child ran on a polled worker, by session
	// (workers_poll_subagents.go).
	polledSubs map[string]*polledSub
	// polledEndRead: its whole conversation is being taken at its end, so that end needs no
	// settle read; polledSettling: it ended without one, which a settle read still owes;
	// settleArmed: its settle timer is set; settleTries: the settle timers its last end had
	// (workers_poll_settle.go).
	polledEndRead, polledSettling, settleArmed bool
	settleTries                                int
	// countOnly: a read is being taken that counts what was spent without holding its steps to
	// the budget (a polled end read, a subagent's whole read: budget.go onStepFinished).
	countOnly bool
	// marksAtStart: its usage marks as this process first counted its spending, and whether it
	// had spent anything by then (usage.go countedBefore).
	marksAtStart []task.UsageMark
	spentAtStart bool
	// forkReady: a forked child has been given its context.
	forkReady bool
	// canDelegate: the child's agent has delegation rights, so its tools were left on.
	canDelegate bool
	// promptSent is set once OpenCode accepted the child's prompt. Before that, a child that
	// looks idle has simply not started, so polling must not read it as finished.
	promptSent bool
	// promptAskedAt is when the child's latest prompt was sent, and promptResends how often it
	// was sent again because OpenCode dropped it (prompt_dropped.go).
	promptAskedAt int64
	promptResends int
	// promptUnsure: the latest prompt's request failed on a worker that was down, so it may
	// never have arrived (tool_task.go's onPromptSent).
	promptUnsure bool
	// sessionError keeps the last session.error seen for the child, for a child that goes idle
	// without writing an assistant message.
	sessionError *task.TaskError
	// msg is the child's newest assistant message as seen in events (see track.go).
	msg *trackedMessage
	// seenCalls dedupes tool parts: OpenCode sends a part again on every state change.
	seenCalls map[string]bool
	// toolCallIDs are the call IDs of Partial.Tools, in the same order (the record keeps no IDs),
	// for the titles that arrive later; textAt is when Partial.Text last changed (partial.go).
	toolCallIDs []string
	textAt      int64
	// latestText is the child's latest text whole; Partial.Text is cut at the result limit.
	latestText string
	// stallNext is when the next reminder of the stall under way is due (liveness.go).
	stallNext int64
	// deadlineAt is the wall-clock deadline its timer is armed for, 0 when none is (deadline.go).
	deadlineAt int64
	// usage: what each of the child's assistant messages spent, by message ID (usage.go).
	usage map[string]messageUsage
	// tmuxPane: a tmux pane was opened for this run (tmux.go).
	tmuxPane bool
	// steerPrompt is the latest message sent to the running child (tool_message.go): a dropped
	// prompt or the next model gets it, not the task's first prompt.
	steerPrompt string
	// stepsSeen: the step-finish parts counted in Steps, by part ID (budget.go).
	stepsSeen map[string]bool
	// quiet: the task ended with others at once (its parent's turn was interrupted, or its own
	// parent task ended), and one notice tells of them all (cascade.go).
	quiet bool
	// refill: the task fell back to a model whose limit is reached, and waits, queued with its
	// session, to be prompted on it (concurrency.go).
	refill bool

	// The fallback loop's place (fallback.go): the chain index of Model, when the current
	// attempt began (older answers are stale), whether this attempt follows a compaction, an
	// abort in flight to leave a failing model and the error that caused it, and whether a new
	// attempt is waiting for OpenCode to report the session busy (an idle before that is the
	// previous attempt's).
	modelIndex int
	attemptAt  int64
	// resumePrompt is the follow-up of the resume under way: a fallback sends it, not the
	// task's prompt, to the next model. It is not persisted: after a restart a resume still at
	// work is left to OpenCode's own retries (canFallBack).
	resumePrompt string
	compacted    bool
	switching    bool
	pendingErr   *task.TaskError
	pendingClass errclass.ErrorClass
	awaitBusy    bool
	// userAfter is when the newest user message seen in the child was created (OpenCode's
	// clock): an answer older than it is no end of the turn (track.go).
	userAfter int64
	// yield: its child's turn is held for the child's own tasks (nested_turns.go).
	yield yieldState
	// Leaving a model is complete once OpenCode confirmed the abort, if one was needed
	// (abortDone), the failed turn's message is complete (settled), and an idle followed it
	// (idleSeen): OpenCode 1.18 drops a prompt sent to a session still winding down a turn.
	abortDone, settled, idleSeen bool
	// pendingCompact: what waits for the settled turn is a compaction, not the next model;
	// compacting: that compaction is under way (session.summarize sent).
	pendingCompact, compacting bool
	// exhausted: the chain ran out, every model failed; the task's error then lists them all.
	exhausted bool
	// toolsRunning: the child's tool calls still at work, by call ID.
	toolsRunning map[string]bool
	// logAt and logLen: where a restore or a compaction found the task's record (its JSON) in
	// the log, for the index they leave (history_index.go). Not kept up to date after that.
	// A task merged from a line that kept fields (history_keep.go) has logAt -1: no one record
	// holds it.
	logAt, logLen int
	// written is what the log holds of its large fields (history_keep.go); recordBytes what
	// its line takes written whole (history_size.go).
	written     keptHashes
	recordBytes int
	// sseSent is the status the event streams were last told of (by a frame, or by the restore
	// that brought the task back); empty while no stream has been told of the task.
	sseSent task.Status
}

// public is the copy of a task that leaves the machine: read whole, no shared slices.
func (t *run) public() task.Task {
	history.Load(&t.Task)
	c := t.Task
	c.Progress.LastTools = append([]string{}, t.Progress.LastTools...)
	if t.Partial != nil {
		p := *t.Partial
		p.Tools = slices.Clone(p.Tools)
		c.Partial = &p
	}
	if t.Error != nil {
		e := *t.Error
		c.Error = &e
	}
	if t.Tokens != nil {
		k := *t.Tokens
		c.Tokens = &k
	}
	if t.FallbackInfo != nil {
		// The attempts are changed in place as the loop goes on; a copy keeps what it saw.
		f := *t.FallbackInfo
		f.Attempts, f.Skipped = slices.Clone(f.Attempts), slices.Clone(f.Skipped)
		c.FallbackInfo = &f
	}
	return c
}
