// The dashboard's facts over `asyncagents serve` (facts.mjs): the times, outcomes and names it
// shows are the task's own.
package browser

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/internal/fixture"
)

// factTasks: a one-model task the user cancelled after a minute (its record from a release that
// kept no attempt's end), a task that fell back from A to B and answered after a minute, and a
// running task whose model call OpenCode retries.
func factTasks() []task.Task {
	at := fixture.Base + 3_600_000
	base := task.Task{ParentSessionID: "ses_user", ParentMessageID: "msg_7", BatchID: "msg_7", ParentTitle: "Fix the login",
		Agent: "general", Depth: 1, Progress: task.Progress{LastTools: []string{}}}
	cancelled := base
	cancelled.ID, cancelled.SessionID, cancelled.Description, cancelled.Prompt = "bg_00000000000000000000f1", "ses_f1", "Cancelled by the user", "Wait."
	cancelled.Status, cancelled.StartedAt, cancelled.CompletedAt, cancelled.CancelReason = task.StatusCancelled, at, at+61_000, "cancelled from the dashboard"
	cancelled.Models, cancelled.Model = []string{"mock/a"}, "mock/a"
	cancelled.FallbackInfo = &task.FallbackInfo{TotalAttempts: 1, Attempts: []task.FallbackAttempt{{Model: "mock/a", Timestamp: at}}}
	fell := base
	fell.ID, fell.SessionID, fell.Description, fell.Prompt = "bg_00000000000000000000f2", "ses_f2", "Fell back to B", "Find it."
	fell.Status, fell.StartedAt, fell.CompletedAt, fell.Result = task.StatusCompleted, at+1, at+61_001, "Found it."
	fell.Models, fell.Model = []string{"mock/a", "mock/b"}, "mock/b"
	fell.FallbackInfo = &task.FallbackInfo{Occurred: true, TotalAttempts: 2, SuccessfulModel: "mock/b", Attempts: []task.FallbackAttempt{
		{Model: "mock/a", Error: "Rate limit reached", Class: "rate_limit", Timestamp: at + 1, EndedAt: at + 2_001},
		{Model: "mock/b", Success: true, Timestamp: at + 2_001, EndedAt: at + 61_001},
	}}
	retrying := base
	retrying.ID, retrying.SessionID, retrying.Description, retrying.Prompt = "bg_00000000000000000000f3", "ses_f3", "Retrying provider", "Go."
	retrying.Status, retrying.StartedAt = task.StatusRunning, at+2
	retrying.Retry = &task.Retry{Attempt: 3, Message: "HTTP 500: upstream exploded", Next: at + 20_000}
	return []task.Task{cancelled, fell, retrying}
}

func TestDashboardTellsTheFacts(t *testing.T) {
	root := repoRoot(t)
	history := fixture.History(20)
	for _, tk := range factTasks() {
		history += core.HistoryLine(tk)
	}
	s := startServe(t, root, history)
	Script(t, root, "facts.mjs", 3*time.Minute, nil, "DASH_URL="+s.URL, "DASH_TOKEN="+s.Token, "DASH_SHOTS="+filepath.Join(root, "dist", "screenshots"))
}
