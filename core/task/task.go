package task

import (
	"encoding/json"
	"strings"

	"github.com/asyncagents/asyncagents/core/errclass"
)

// Status is a task's place in its lifecycle. The five values are the spec's.
type Status string

const (
	StatusRunning   Status = "running"
	StatusCompleted Status = "completed"
	StatusError     Status = "error"
	StatusCancelled Status = "cancelled"
	StatusResumed   Status = "resumed"
	// StatusQueued is what a running task waiting for a start slot (Queued) is shown and written
	// as: the API, its event frames, /v1/stats and the history say queued, so that a client
	// reading status alone is not told it runs. Inside the core it stays running with Queued
	// set (one lifecycle for the spec's five); reading a record turns it back (AdoptLegacyID).
	StatusQueued Status = "queued"
	// StatusPreparing is an isolated task whose worktree is being created: launched, no session
	// yet. It holds a start slot, as a task whose session is being created does.
	StatusPreparing Status = "preparing"
)

// Shown is the status a task is shown and written with: queued for a running task that waits
// for a slot, else its own.
func (t *Task) Shown() Status {
	if t.Queued && t.Status == StatusRunning {
		return StatusQueued
	}
	if t.Status == StatusRunning && t.SessionID == "" && t.Worktree != nil && t.Worktree.Base == "" {
		return StatusPreparing // its worktree is being created
	}
	return t.Status
}

// Terminal reports whether no more work happens on a task in this status.
func (s Status) Terminal() bool {
	return s == StatusCompleted || s == StatusError || s == StatusCancelled
}

// Task is one background subagent run. Its ID is the core's own ("bg_…", core/taskid.go), minted
// when the tool is called, so a launch never waits for OpenCode; SessionID is the child session, once
// it exists (a queued task has none). Every lookup takes either. A task written by a release
// whose IDs were the session's has no "id" in its record: its ID is its session's.
type Task struct {
	ID              string `json:"id"`
	SessionID       string `json:"sessionID,omitempty"`
	ParentSessionID string `json:"parentSessionID"`
	ParentMessageID string `json:"parentMessageID"`
	ParentAgent     string `json:"parentAgent,omitempty"`
	// ParentTitle is the parent session's title as OpenCode last announced it while the task
	// ran ("" until it did): a batch is named by it.
	ParentTitle string `json:"parentTitle,omitempty"`
	BatchID     string `json:"batchId"`
	Description string `json:"description"`
	Prompt      string `json:"prompt"`
	Agent       string `json:"agent"`
	// Worker is the worker the task runs on ("" for the local OpenCode): its child session
	// lives there (docs/rationale/workers.md). Only its name: never its URL or credentials.
	Worker string `json:"worker,omitempty"`
	Status Status `json:"status"`
	// NoticeOwed is when the task's notice to its parent fell due (its end), while OpenCode has
	// not yet accepted it; 0 once it has (NotifiedAt), or when none is owed. It is written before
	// startedAt so that a restore, which reads a finished task's record only so far
	// (core/history/lazy.go), finds every notice still owed (core/outbox.go).
	NoticeOwed  int64      `json:"noticeOwed,omitempty"`
	StartedAt   int64      `json:"startedAt"`
	CompletedAt int64      `json:"completedAt,omitempty"`
	Result      string     `json:"result,omitempty"`
	Error       *TaskError `json:"error,omitempty"`
	Progress    Progress   `json:"progress"`
	ResumeCount int        `json:"resumeCount"`
	IsForked    bool       `json:"isForked"`
	RetrievedAt int64      `json:"retrievedAt,omitempty"`
	// Queued is set while the task waits for a start slot (see config.Config.MaxConcurrentStarts
	// and config.ConcurrencyConfig); Waiting says which limit it waits for and its place.
	Queued  bool  `json:"queued,omitempty"`
	Waiting *Wait `json:"waiting,omitempty"`
	// Depth is 1 for a task launched from a user's session, 2 for one launched by such a task.
	Depth int `json:"depth"`
	// CancelReason is the reason given to asyncagents_cancel, if any.
	CancelReason string `json:"cancelReason,omitempty"`
	// ResumedAt is when the latest resume started; a resume's notice times the resume alone.
	ResumedAt int64 `json:"resumedAt,omitempty"`
	// Tokens is the forked context's estimated size, when IsForked.
	ForkTokens int `json:"forkTokens,omitempty"`
	// Models is the task's model chain ("provider/model"), empty when OpenCode chooses; Model
	// the one the current (or last) attempt runs on; FallbackInfo the record of the attempts.
	Models       []string      `json:"models,omitempty"`
	Model        string        `json:"model,omitempty"`
	FallbackInfo *FallbackInfo `json:"fallbackInfo,omitempty"`
	// TimeoutMs is the wall-clock limit of a run (asyncagents_task's timeout, else the config's
	// taskTimeoutMs), 0 for none: at it the child is aborted and the task fails.
	TimeoutMs int64 `json:"timeoutMs,omitempty"`
	// StalledSince marks a running task that has shown no activity for stall.warnAfterMs: it is
	// the time of its last activity (Unix ms), 0 while the task is not stalled. Activity and the
	// task's end clear it.
	StalledSince int64 `json:"stalledSince,omitempty"`
	// QueuedUntil is when a task that waited in the queue got its slot (0: it never waited, or
	// still waits); Stalls are its stalls that ended, the latest MaxStalls. The dashboard's batch
	// timeline draws both (core/view).
	QueuedUntil int64  `json:"queuedUntil,omitempty"`
	Stalls      []Span `json:"stalls,omitempty"`
	// Partial is what the child did, kept as it works so that a task that fails, times out or
	// is cancelled still carries it.
	Partial *Partial `json:"partial,omitempty"`
	// Tokens and Cost are what the child spent over all its runs (resumes add to them): nil and
	// 0 until OpenCode reported a message's usage (usage.go).
	Tokens *Tokens `json:"tokens,omitempty"`
	Cost   float64 `json:"cost,omitempty"`
	// Steps counts the child's model calls (a step-finish part each) over all its runs; Budget
	// is the task's limits, nil for none (core/budget.go).
	Steps int `json:"steps,omitempty"`
	// UsageMarks says, per session the task's spending was counted in (its child's, its
	// subagents'), how far: after a restart, what OpenCode reports again up to there is not
	// counted twice (core/usage.go).
	UsageMarks []UsageMark `json:"usageMarks,omitempty"`
	Budget     *Budget     `json:"budget,omitempty"`
	// Steers are the messages the parent sent the task while it ran (asyncagents_message), the
	// last MaxSteers of them.
	Steers []Steer `json:"steers,omitempty"`
	// Permissions are the permission requests of the task's child, the last MaxPermissions; an
	// unanswered one means the task waits for the user (core/permission.go).
	Permissions []PermissionRequest `json:"permissions,omitempty"`
	// Worktree is the git worktree an isolated task works in (nil: the parent's directory).
	Worktree *Worktree `json:"worktree,omitempty"`
	// Retry is OpenCode retrying the child's model call after a provider error (its
	// session.status "retry"), nil when it is not: set at each retry, cleared by the child's next
	// activity and by the task's end.
	Retry *Retry `json:"retry,omitempty"`
	// NotifiedAt is when OpenCode accepted the task's latest notice to its parent.
	NotifiedAt int64 `json:"notifiedAt,omitempty"`
	// View is how a page shows the task (core/view.TaskOf): set on the status API's copies
	// only, never in the history.
	View *View `json:"view,omitempty"`

	// rest: the history record of a task a restore read only the head of, until it is loaded
	// (core/history/lazy.go; SetRest, TakeRest).
	rest string
}

// Wait is what a queued task waits for: the option that sets the limit (maxConcurrentStarts,
// concurrency.models["a/b"], ...), its value, and the task's place in that limit's queue (1: next).
type Wait struct {
	Limit    string `json:"limit"`
	Max      int    `json:"max"`
	Position int    `json:"position"`
}

// Span is a stretch of a task's time, Unix ms.
type Span struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

// Retry is one retry of a child's model call, as OpenCode reports it: the attempt (1 for the
// first retry), the provider's error, and when the next try goes (Unix ms).
type Retry struct {
	Attempt int    `json:"attempt"`
	Message string `json:"message"`
	Next    int64  `json:"next,omitempty"`
}

// MaxStalls is how many ended stalls a task keeps.
const MaxStalls = 20

// Budget is a task's limits: asyncagents_task's budget over the config's defaults, field by
// field. A zero field is no limit.
type Budget struct {
	Steps   int     `json:"steps,omitempty"`
	Tokens  int64   `json:"tokens,omitempty"`
	CostUsd float64 `json:"costUsd,omitempty"`
}

// Steer is one message sent to a task: when, its text, and whether it went into the prompt of a
// task still queued.
type Steer struct {
	At          int64  `json:"at"`
	Text        string `json:"text"`
	BeforeStart bool   `json:"beforeStart,omitempty"`
}

// MaxSteers is how many messages a task's record keeps.
const MaxSteers = 20

// PermissionRequest is a permission a task's child (or a session below it) asked the user for:
// OpenCode's request ID, the session that asked, the permission and its patterns, when; and once
// answered, the reply (once, always, reject; "gone" when a worker no longer held it, the core's
// word), when, and whether the timeout gave it.
type PermissionRequest struct {
	ID         string   `json:"id"`
	SessionID  string   `json:"sessionID"`
	Permission string   `json:"permission"`
	Patterns   []string `json:"patterns,omitempty"`
	At         int64    `json:"at"`
	Reply      string   `json:"reply,omitempty"`
	RepliedAt  int64    `json:"repliedAt,omitempty"`
	TimedOut   bool     `json:"timedOut,omitempty"`
}

// A permission request's replies, as OpenCode names them: the machine's timeout gives
// PermissionReject, and the status API takes any of PermissionReplies.
const (
	PermissionOnce   = "once"
	PermissionAlways = "always"
	PermissionReject = "reject"
)

// PermissionReplies is every reply OpenCode takes, in the order the status API names them.
var PermissionReplies = []string{PermissionOnce, PermissionAlways, PermissionReject}

// What is the request in a few words: "bash echo hi".
func (p *PermissionRequest) What() string {
	if len(p.Patterns) == 0 {
		return p.Permission
	}
	return p.Permission + " " + strings.Join(p.Patterns, ", ")
}

// View is how a page shows a task beside its record, decided once for every page
// (core/view.TaskOf): the status as a word, the budget as a line, and what the child waits for
// permission to do.
type View struct {
	// Label is "queued" (running, waiting for a slot), "waiting" (for the user's permission),
	// "running", "resumed", "completed", "failed" or "cancelled".
	Label string `json:"label"`
	// Budget is the usage against the task's budget ("2 of 3 model calls · 1.2k of 5k tokens ·
	// $0.01 of $0.50"), "" for a task without one.
	Budget string `json:"budget,omitempty"`
	// Permission is what the child waits for the user to allow ("bash echo hi"), "" when
	// nothing; PermissionAt is when it asked, PermissionID the request's ID (an answer names it).
	Permission   string `json:"permission,omitempty"`
	PermissionAt int64  `json:"permissionAt,omitempty"`
	PermissionID string `json:"permissionId,omitempty"`
	// Retry is OpenCode's retry of the child's model call in a few words ("retrying (attempt
	// 3): HTTP 500 …"), "" when none.
	Retry string `json:"retry,omitempty"`
	// Duration is how long the task has run, or ran, as of the answer ("4.2s", "2m 5s"); a page
	// showing a task at work reads it again to see it grow.
	Duration string `json:"duration"`
	// Tokens is every token the task spent, short ("12.3k"), and Cost what it cost ("$0.0125"):
	// "" while OpenCode reported none.
	Tokens string `json:"tokens,omitempty"`
	Cost   string `json:"cost,omitempty"`
	// Queue is where a queued task waits ("position 2 in the queue of concurrency.default, 3 at
	// once"), "" when it does not.
	Queue string `json:"queue,omitempty"`
	// PermissionWait is how long the child has waited for the permission, as of the answer.
	PermissionWait string `json:"permissionWait,omitempty"`
	// Changes are an isolated task's changed files' line counts ("+3 −1", "binary"), one per
	// file of its worktree, in the same order.
	Changes []string `json:"changes,omitempty"`
	// Worker is the worker the task runs on, "" for local.
	Worker string `json:"worker,omitempty"`
	// Attempts are the model attempts as a page lists them, nil when there is nothing to show
	// (no chain of models, or one model that did not fail).
	Attempts []AttemptView `json:"attempts,omitempty"`
}

// AttemptView is one model attempt as a page shows it: the model, how it went in a few words
// ("answered", "failed (rate_limit)", "at work", "cancelled"), the tone to draw it in, its start
// and end (0 while it runs), its error, and whether it followed a compaction.
type AttemptView struct {
	Model   string `json:"model"`
	Outcome string `json:"outcome"`
	Tone    string `json:"tone"`
	From    int64  `json:"from"`
	To      int64  `json:"to,omitempty"`
	// Took is how long the attempt lasted ("2m 5s"), "" while it runs.
	Took      string `json:"took,omitempty"`
	Error     string `json:"error,omitempty"`
	Compacted bool   `json:"compacted,omitempty"`
}

// UsageMark is how far a task's spending in one session is counted: the latest assistant message
// counted, with the figures counted for it (a message's figures grow until it completes), and the
// latest step-finish part counted. OpenCode's message and part IDs ascend within a session.
type UsageMark struct {
	Session string  `json:"session"`
	Message string  `json:"message,omitempty"`
	Tokens  Tokens  `json:"tokens"`
	Cost    float64 `json:"cost,omitempty"`
	Step    string  `json:"step,omitempty"`
}

// UsageMark is t's mark for session (the zero mark when it has none).
func (t *Task) UsageMark(session string) UsageMark {
	for _, k := range t.UsageMarks {
		if k.Session == session {
			return k
		}
	}
	return UsageMark{Session: session}
}

// MaxUsageMarks bounds the sessions a task's record keeps a mark for: the oldest (the session
// whose latest message is the oldest, a subagent long done) goes first.
const MaxUsageMarks = 16

// MaxPermissions is how many requests a task's record keeps.
const MaxPermissions = 20

// WaitingPermission is the task's unanswered permission request, or nil.
func (t *Task) WaitingPermission() *PermissionRequest {
	for i := len(t.Permissions) - 1; i >= 0; i-- {
		if t.Permissions[i].Reply == "" {
			return &t.Permissions[i]
		}
	}
	return nil
}

// TaskError is a failure as OpenCode reports it: the error's name and its message, and the
// provider's HTTP status when there was one.
type TaskError struct {
	Name       string `json:"name"`
	Message    string `json:"message"`
	StatusCode int    `json:"statusCode,omitempty"`
	// body is the provider's response body, read to classify the error, not kept.
	body string
}

// NewError is a failure with the provider's response body, which only the classifier reads.
func NewError(name, message string, statusCode int, body string) *TaskError {
	return &TaskError{Name: name, Message: message, StatusCode: statusCode, body: body}
}

// Provider is the error as the classifier reads it.
func (e *TaskError) Provider() errclass.ProviderError {
	return errclass.ProviderError{Name: e.Name, Message: e.Message, StatusCode: e.StatusCode, ResponseBody: e.body}
}

// Progress is what a running task has been doing, from its child's tool parts.
type Progress struct {
	ToolCalls  int      `json:"toolCalls"`
	LastTools  []string `json:"lastTools"`
	LastUpdate int64    `json:"lastUpdate"`
}

// Partial is a child's work so far: its latest assistant text and the tools it ran.
type Partial struct {
	// Text is the child's latest assistant text, cut at the result limit (maxResultChars);
	// TextChars is its whole length in characters.
	Text      string `json:"text,omitempty"`
	TextChars int    `json:"textChars,omitempty"`
	// Tools are the tools it ran, oldest first, the last MaxPartialTools of them.
	Tools []ToolRun `json:"tools,omitempty"`
}

// ToolRun is one tool call of the child: the tool's name and the title OpenCode gave the call.
type ToolRun struct {
	Name  string `json:"name"`
	Title string `json:"title,omitempty"`
}

// MaxPartialTools is how many of the child's tool calls Partial keeps.
const MaxPartialTools = 50

// MaxLastTools is how many recent tool names Progress keeps.
const MaxLastTools = 5

// Duration is how long the task has run, or ran: until now while it runs, until its last activity
// when it ended without its time. A task a restore read
// only the head of must be loaded first (its end is not in the head).
func (t *Task) Duration(now int64) int64 {
	end := t.CompletedAt
	switch {
	case !t.Status.Terminal():
		end = now
	case end == 0:
		// A record that ended without its time (an earlier release's): its last activity is the
		// nearest to its end that it tells, not now, which would grow it for ever.
		end = max(t.Progress.LastUpdate, t.StartedAt)
	}
	if end < t.StartedAt {
		return 0
	}
	return end - t.StartedAt
}

// AdoptLegacyID reads a record of a release whose task IDs were the child session's: one without
// "id" takes its session's, and one whose ID is not the core's own (no "bg_") is its session's.
func (t *Task) AdoptLegacyID() {
	switch {
	case t.ID == "":
		t.ID = t.SessionID
	case t.SessionID == "" && !strings.HasPrefix(t.ID, IDPrefix):
		t.SessionID = t.ID
	}
	// A record written with the status queued (Shown) is a running task that waits for a slot;
	// a record of an earlier release says running with queued set, which reads the same.
	if t.Status == StatusQueued {
		t.Status, t.Queued = StatusRunning, true
	}
	if t.Status == StatusPreparing { // Shown: a running task whose worktree is being created
		t.Status = StatusRunning
	}
}

// UnmarshalJSON reads a task as encoding/json does, then its IDs as AdoptLegacyID does, so that
// a task of an earlier release decodes the same way wherever it is read.
func (t *Task) UnmarshalJSON(b []byte) error {
	type plain Task
	if err := json.Unmarshal(b, (*plain)(t)); err != nil {
		return err
	}
	t.AdoptLegacyID()
	return nil
}

// ChildSession is the task's child session: SessionID, or for a task built by hand in the
// earlier form (ID "ses_…", no SessionID) its ID.
func (t *Task) ChildSession() string {
	if t.SessionID == "" && !strings.HasPrefix(t.ID, IDPrefix) {
		return t.ID
	}
	return t.SessionID
}

// SetRest keeps body, the whole history record of a task a restore read only the head of, to be
// read when the task is loaded.
func (t *Task) SetRest(body string) { t.rest = body }

// TakeRest returns the record SetRest kept, if the task has not been loaded since, and forgets
// it: a task is loaded once.
func (t *Task) TakeRest() string {
	body := t.rest
	t.rest = ""
	return body
}

// Lazy reports whether the task holds only the head of its record.
func (t *Task) Lazy() bool { return t.rest != "" }

// IDPrefix starts every ID the core mints. A lookup of an ID without it may be a session's.
const IDPrefix = "bg_"
