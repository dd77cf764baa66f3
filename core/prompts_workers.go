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
	workerNeverUp        = "its event stream never came up"
	workerStreamDown     = "its event stream is down"
	workerLineFmt        = "worker: %s\n"
	// A worker's own agents (workers_agents.go).
	workerUnknownAgentFmt   = "asyncagents_task: worker %s has no agent %s; its agents: %s. No task was created."
	workerPrimaryAgentFmt   = "asyncagents_task: agent %s is a primary agent on worker %s and cannot run as a background subagent; its agents: %s. No task was created."
	workerAgentsUnlistedFmt = "worker %s did not list its agents (%s); its tasks are checked against the local agents"
	// An isolated task on a worker (workers_worktree.go).
	remoteWorktreeErrorFmt  = "could not create the task's worktree on worker %s: %s"
	remoteDiffFailedFmt     = "its changes could not be read from worker %s (its worktree is kept there at %s): %s"
	importFailedFmt         = "its changes did not apply to your HEAD (its worktree is kept on worker %s at %s): %s"
	resumeRemoteIsolatedFmt = "task %s worked in a worktree on worker %s, removed once its changes came home as its branch; launch a new task instead"
	// What a restart finds on a worker (workers_worktree_restart.go).
	workerWorktreesUnlistedFmt = "could not list the worktrees on worker %s, looked at again when it next comes up: %s"
	workerWorktreeLeftFmt      = "task %s: removing its worktree %s on worker %s, left there by a stop of this process"
	workerImportAfterStopFmt   = "task %s: bringing home the changes of its worktree %s on worker %s, which a stop of this process left there"
)

// workerLine is the "worker: w1" line of a task's answers and notices, "" for a local task.
func workerLine(t *task.Task) string {
	if t.Worker == "" {
		return ""
	}
	return fmt.Sprintf(workerLineFmt, t.Worker)
}
