package abi

import (
	"fmt"
	"strings"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/task"
)

// someTasks is n tasks of every status but running, with the fields a finished task has.
func someTasks(n int) []task.Task {
	statuses := []task.Status{task.StatusCompleted, task.StatusError, task.StatusCancelled, task.StatusResumed}
	tasks := make([]task.Task, n)
	for i := range tasks {
		tasks[i] = task.Task{ID: fmt.Sprintf("bg_%08d", i), SessionID: fmt.Sprintf("ses_%08d", i), ParentSessionID: "ses_parent",
			ParentMessageID: fmt.Sprintf("msg_%d", i/4), BatchID: fmt.Sprintf("batch_%d", i/4), Description: fmt.Sprintf("Investigate module %d", i),
			Prompt: "Look at the code and report what you find.", Agent: "general", Status: statuses[i%len(statuses)],
			StartedAt: int64(1_700_000_000_000 + i*1000), CompletedAt: int64(1_700_000_001_000 + i*1000), Depth: 1,
			Progress: task.Progress{ToolCalls: i % 37, LastTools: []string{"read", "grep", "glob"}, LastUpdate: int64(1_700_000_000_500 + i*1000)}}
	}
	return tasks
}

// history is a compacted log of n finished tasks, as a long-used install would have.
func history(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(core.HistoryLine(task.Task{ID: fmt.Sprintf("bg_%06d", i), SessionID: fmt.Sprintf("ses_%06d", i), ParentSessionID: "ses_p",
			BatchID: fmt.Sprintf("m%d", i/5), Description: "survey a module", Prompt: strings.Repeat("Look at the code and report. ", 8),
			Agent: "general", Status: task.StatusCompleted, StartedAt: int64(i), CompletedAt: int64(i + 5000), Result: strings.Repeat("Findings line. ", 30),
			Progress: task.Progress{ToolCalls: 7, LastTools: []string{"read", "grep", "read", "glob", "read"}}, Depth: 1}))
	}
	return b.String()
}
