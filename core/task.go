package core

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
)

// Terminal reports whether no more work happens on a task in this status.
func (s Status) Terminal() bool {
	return s == StatusCompleted || s == StatusError || s == StatusCancelled
}

// Task is one background subagent run. Its ID is the core's own ("bg_…", taskid.go), minted when
// the tool is called, so a launch never waits for OpenCode; SessionID is the child session, once
// it exists (a queued task has none). Every lookup takes either. A task written by a release
// whose IDs were the session's has no "id" in its record: its ID is its session's.
type Task struct {
	ID              string     `json:"id"`
	SessionID       string     `json:"sessionID,omitempty"`
	ParentSessionID string     `json:"parentSessionID"`
	ParentMessageID string     `json:"parentMessageID"`
	ParentAgent     string     `json:"parentAgent,omitempty"`
	BatchID         string     `json:"batchId"`
	Description     string     `json:"description"`
	Prompt          string     `json:"prompt"`
	Agent           string     `json:"agent"`
	Status          Status     `json:"status"`
	StartedAt       int64      `json:"startedAt"`
	CompletedAt     int64      `json:"completedAt,omitempty"`
	Result          string     `json:"result,omitempty"`
	Error           *TaskError `json:"error,omitempty"`
	Progress        Progress   `json:"progress"`
	ResumeCount     int        `json:"resumeCount"`
	IsForked        bool       `json:"isForked"`
	RetrievedAt     int64      `json:"retrievedAt,omitempty"`
	// Queued is set while the task waits for a start slot (see config.Config.MaxConcurrentStarts).
	Queued bool `json:"queued,omitempty"`
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

	// creating: the child session is being created (session.create sent, no answer yet).
	creating bool
	// forkReady: a forked child has been given its context.
	forkReady bool
	// canDelegate: the child's agent has delegation rights, so its tools were left on.
	canDelegate bool
	// promptSent is set once OpenCode accepted the child's prompt. Before that, a child that
	// looks idle has simply not started, so polling must not read it as finished.
	promptSent bool
	// sessionError keeps the last session.error seen for the child, for a child that goes idle
	// without writing an assistant message.
	sessionError *TaskError
	// msg is the child's newest assistant message as seen in events (see track.go).
	msg *trackedMessage
	// seenCalls dedupes tool parts: OpenCode sends a part again on every state change.
	seenCalls map[string]bool
	// tmuxPane: a tmux pane was opened for this run (tmux.go).
	tmuxPane bool

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
	pendingErr   *TaskError
	pendingClass errclass.ErrorClass
	awaitBusy    bool
	// Leaving a model is complete once OpenCode confirmed the abort, if one was needed
	// (abortDone), the failed turn's message is complete (settled), and an idle followed it
	// (idleSeen): OpenCode 1.18 drops a prompt sent to a session still winding down a turn.
	abortDone, settled, idleSeen bool
	// pendingCompact: what waits for the settled turn is a compaction, not the next model;
	// compacting: that compaction is under way (session.summarize sent).
	pendingCompact, compacting bool
	// toolsRunning: the child's tool calls still at work, by call ID.
	toolsRunning map[string]bool
	// rest: the history record of a task a restore read only the head of, until load reads
	// the rest (history_lazy.go).
	rest string
	// logAt and logLen: where a restore or a compaction found the task's record (its JSON) in
	// the log, for the index they leave (history_index.go). Not kept up to date after that.
	logAt, logLen int
	// sseSent is the status the event streams were last told of (by a frame, or by the restore
	// that brought the task back); empty while no stream has been told of the task.
	sseSent Status
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

// provider is the error as the classifier reads it.
func (e *TaskError) provider() errclass.ProviderError {
	return errclass.ProviderError{Name: e.Name, Message: e.Message, StatusCode: e.StatusCode, ResponseBody: e.body}
}

// Progress is what a running task has been doing, from its child's tool parts.
type Progress struct {
	ToolCalls  int      `json:"toolCalls"`
	LastTools  []string `json:"lastTools"`
	LastUpdate int64    `json:"lastUpdate"`
}

// maxLastTools is how many recent tool names Progress keeps.
const maxLastTools = 5

// Duration is how long the task has run, or ran: until now while it runs.
func (t *Task) Duration(now int64) int64 {
	t.load()
	end := t.CompletedAt
	if end == 0 || !t.Status.Terminal() {
		end = now
	}
	if end < t.StartedAt {
		return 0
	}
	return end - t.StartedAt
}

// adoptLegacyID reads a record of a release whose task IDs were the child session's: one without
// "id" takes its session's, and one whose ID is not the core's own (no "bg_") is its session's.
func (t *Task) adoptLegacyID() {
	switch {
	case t.ID == "":
		t.ID = t.SessionID
	case t.SessionID == "" && !strings.HasPrefix(t.ID, TaskIDPrefix):
		t.SessionID = t.ID
	}
}

// UnmarshalJSON reads a task as encoding/json does, then its IDs as adoptLegacyID does, so that
// a task of an earlier release decodes the same way wherever it is read.
func (t *Task) UnmarshalJSON(b []byte) error {
	type plain Task
	if err := json.Unmarshal(b, (*plain)(t)); err != nil {
		return err
	}
	t.adoptLegacyID()
	return nil
}

// childSession is the task's child session: SessionID, or for a task built by hand in the
// earlier form (ID "ses_…", no SessionID) its ID.
func (t *Task) childSession() string {
	if t.SessionID == "" && !strings.HasPrefix(t.ID, TaskIDPrefix) {
		return t.ID
	}
	return t.SessionID
}
