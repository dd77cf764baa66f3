package task

// The fallback loop's record of a task's model calls (the machine keeps it: core/fallback.go).

// FallbackInfo is the record of a task's attempts.
type FallbackInfo struct {
	// Occurred is true when the task ran on another model than its chain's first.
	Occurred bool              `json:"occurred"`
	Attempts []FallbackAttempt `json:"attempts"`
	// Skipped lists the chain's models passed over because their circuit was open.
	Skipped         []string `json:"skipped,omitempty"`
	SuccessfulModel string   `json:"successfulModel,omitempty"`
	TotalAttempts   int      `json:"totalAttempts"`
}

// FallbackAttempt is one model call: its model, when it started and ended, and how it ended.
type FallbackAttempt struct {
	Model     string `json:"model"`
	Success   bool   `json:"success"`
	Error     string `json:"error,omitempty"`
	Class     string `json:"class,omitempty"` // the error's class (package errclass)
	Timestamp int64  `json:"timestamp"`
	// EndedAt is when the attempt ended (it answered, failed, or the task ended under it); 0
	// while it runs, and in records of an earlier release.
	EndedAt   int64 `json:"endedAt,omitempty"`
	Compacted bool  `json:"compacted,omitempty"` // a retry after compacting the session
	// Partial is the latest text the attempt wrote before it was abandoned, cut at the result
	// limit.
	Partial string `json:"partial,omitempty"`
}
