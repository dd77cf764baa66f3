package core

import (
	"fmt"

	"github.com/asyncagents/asyncagents/core/task"
)

// --- The words of tasks on workers (workers.go, workers_launch.go). ---

const (
	workerUnreachableFmt = "asyncagents_task: worker %s cannot be reached: %s; no task was created"
	workerLostFmt        = "worker %s was lost: %s"
	workerGoneFmt        = "worker %s is no longer configured (workers in asyncagents.json), so the task cannot be followed"
	workerOnResume       = "asyncagents_task: worker applies to a new task; a resumed task stays on the worker it ran on; no task was resumed"
	workerLineFmt        = "worker: %s\n"
)

// workerLine is the "worker: w1" line of a task's answers and notices, "" for a local task.
func workerLine(t *task.Task) string {
	if t.Worker == "" {
		return ""
	}
	return fmt.Sprintf(workerLineFmt, t.Worker)
}
