package history

import (
	"fmt"
	"strings"

	"github.com/asyncagents/asyncagents/core/task"
)

// sampleLog is n tasks' history lines as the core writes them: every status, errors, progress,
// cancel reasons and retrievals among them, and with fallback set, fallback records (which only
// encoding/json reads, not the fast decoder).
func sampleLog(n int, fallback bool) string {
	statuses := []task.Status{task.StatusCompleted, task.StatusCompleted, task.StatusError, task.StatusCancelled, task.StatusRunning, task.StatusResumed}
	var b strings.Builder
	for i := range n {
		st := statuses[i%len(statuses)]
		t := task.Task{ID: fmt.Sprintf("bg_%08d", i), SessionID: fmt.Sprintf("ses_%08d", i), ParentSessionID: "ses_parent",
			ParentMessageID: fmt.Sprintf("msg_%d", i/4), BatchID: fmt.Sprintf("batch_%d", i/4), Description: fmt.Sprintf("Investigate module %d", i),
			Prompt: strings.Repeat("Look at the code and report what you find. ", 6), Agent: "general", Status: st,
			StartedAt: int64(1_700_000_000_000 + i*1000), Depth: 1 + i%2, IsForked: i%5 == 1,
			Progress: task.Progress{ToolCalls: i % 37, LastTools: []string{"read", "grep", "glob"}, LastUpdate: int64(1_700_000_000_500 + i*1000)}}
		if st.Terminal() {
			t.CompletedAt, t.Result = t.StartedAt+int64(1000+i), strings.Repeat("result text ", 20)
		}
		if i%3 == 0 {
			t.Tokens = &task.Tokens{Input: int64(1000 * i), Output: int64(i), CacheRead: int64(50 * i)}
			t.Cost = float64(i) * 0.0013
		}
		switch {
		case st == task.StatusError:
			t.Error = &task.TaskError{Name: "APIError", Message: "rate limited", StatusCode: 429}
		case fallback && i%11 == 3:
			t.FallbackInfo = &task.FallbackInfo{Occurred: true, Attempts: []task.FallbackAttempt{{Model: "a/b"}, {Model: "c/d", Success: true}}, TotalAttempts: 2}
			t.Models, t.Model = []string{"a/b", "c/d"}, "c/d"
		case i%11 == 7:
			t.CancelReason = "not needed"
			t.RetrievedAt = t.StartedAt + 1
		}
		b.WriteString(Line(Record{Task: &t}))
	}
	return b.String()
}
