package core

import (
	"fmt"
	"strings"
	"time"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/core/text"
)

// TasksTable renders tasks for a terminal (`asyncagents ls`): one row a task, newest last, with
// its ID and its child session's (what `opencode attach --session` and the TUI take).
func TasksTable(tasks []task.Task, now int64) string {
	if len(tasks) == 0 {
		return "No background tasks found\n"
	}
	rows := [][]string{{"TASK ID", "SESSION", "STATUS", "AGENT", "DESCRIPTION", "STARTED", "TIME", "TOOLS"}}
	isolated := anyIsolated(tasks) // the branch columns only where a task has a branch
	if isolated {
		rows[0] = append(rows[0], "BRANCH", "MERGE")
	}
	remote := anyRemote(tasks) // the worker column only where a task ran on one
	if remote {
		rows[0] = append(rows[0], "WORKER")
	}
	for _, t := range tasks {
		id := markedID(&t)
		status := string(t.Shown()) // queued, preparing
		if t.Queued {
			status = "queued"
		}
		started := time.UnixMilli(t.StartedAt).UTC().Format("2006-01-02 15:04:05")
		session := t.SessionID
		if session == "" {
			session = "-" // queued, or its session was never made
		}
		row := []string{id, session, status, t.Agent, t.Description, started, text.Duration(t.Duration(now)), fmt.Sprint(t.Progress.ToolCalls)}
		if isolated {
			row = append(row, branchCells(&t)...)
		}
		if remote {
			row = append(row, cellOr(t.Worker, "-"))
		}
		rows = append(rows, row)
	}
	return alignColumns(rows)
}

// alignColumns writes rows as a terminal table: each column as wide as its widest cell plus two
// spaces, the last column unpadded.
func alignColumns(rows [][]string) string {
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			if n := len([]rune(c)); n > widths[i] {
				widths[i] = n
			}
		}
	}
	var b strings.Builder
	for _, r := range rows {
		for i, c := range r {
			if i == len(r)-1 {
				b.WriteString(c)
				break
			}
			b.WriteString(c + strings.Repeat(" ", widths[i]-len([]rune(c))+2))
		}
		b.WriteString("\n")
	}
	return b.String()
}
