package core

import (
	"fmt"
	"strings"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/core/text"
)

// The texts of steering (tool_message.go), of the parent's memory across compaction
// (compaction.go) and of a child's permission requests (permission.go).

// messageTool is asyncagents_message as the model sees it.
func messageTool() ToolSpec {
	return ToolSpec{
		Name: ToolMessage,
		Description: `Send a message to a background task that is still running, to steer it without starting over: add something it should also do, correct a wrong assumption, narrow or widen its scope ("also check the README", "skip the tests").

The subagent reads the message at its next step and keeps the work it has done; the task's result is then its answer to your latest message, and its notice arrives as usual. A queued task gets the message in the prompt it starts with.

Use asyncagents_task with resume instead to continue a task that has already completed, and asyncagents_cancel to stop one whose work is no longer needed.`,
		Args: []ArgSpec{
			{Name: "task_id", Type: "string", Required: true, Description: "The running task: its task_id (or its session_id)"},
			{Name: "message", Type: "string", Required: true, Description: "What the subagent should know or do now, as you would tell a colleague mid-task"},
		},
	}
}

const (
	messageArgsMissing     = "asyncagents_message: task_id and message are both required; nothing was sent"
	messageNoTaskFmt       = "asyncagents_message: no background task has task_id %s; call asyncagents_list to see this session's tasks. Nothing was sent."
	messageOtherSessionFmt = "asyncagents_message: task %s belongs to another session; only its own session can message it. Nothing was sent."
	messageCompletedFmt    = "asyncagents_message: task %s has already completed, so nothing was sent. To continue it with this message, call asyncagents_task(resume=%q, prompt=<the message>)."
	messageEndedFmt        = "asyncagents_message: task %s has ended (%s), so nothing was sent; launch a new task for the work still needed."
	messageSentFmt         = "Message sent to task %s %q. The subagent reads it at its next step; its result will answer it, and its notice arrives as usual."
	messageQueuedFmt       = "Task %s %q has not started yet (queued); the message was added to the prompt it starts with."
)

// steersBlock lists the messages a task was sent, for asyncagents_output: "messages sent:\n- after
// 12s: also check the README".
func steersBlock(t *task.Task) string {
	if len(t.Steers) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("messages sent:\n")
	for _, s := range t.Steers {
		when := "before it started"
		if !s.BeforeStart {
			when = "after " + text.Duration(max(s.At-t.StartedAt, 0))
		}
		fmt.Fprintf(&b, "- %s: %s\n", when, s.Text)
	}
	return b.String()
}

// The compaction's texts (compaction.go).
const (
	compactionContextHead = "Background tasks this session launched with asyncagents (keep every task_id in the summary, with its status: the conversation goes on with them):\n"
	compactionContextTail = "\nA task's whole result: asyncagents_output(task_id=...). Running tasks deliver their notices here when they finish."
	compactedHiddenHead   = "This conversation was compacted. These background tasks of yours are still running, or finished with a result you have not read:\n"
	compactedVisibleFmt   = "↻ Compacted: %s still running, %d with results not read (task IDs kept for the next turn)."
)

// The permission texts (permission.go).
const (
	permissionVisibleFmt     = "⏸ Agent %q waits for permission: %s"
	permissionHiddenFmt      = "Background task %s %q waits for the user's permission: %s. It is paused until the user answers in OpenCode's TUI or the asyncagents dashboard; you cannot answer it. Go on with other work."
	permissionToastTitleFmt  = "Agent %q waits for permission"
	permissionTimeoutMessage = "Nobody answered this permission request in time, so it was rejected. Go on without it: finish what you can, and say in your answer what you could not do."
	permissionTimedOutLogFmt = "task %s: permission request %s was not answered within permission.timeoutMs; rejected"
	permissionReplyFailedFmt = "task %s: OpenCode refused the answer to its permission request: %s"
)

// apiForeignPermissionFmt refuses an answer for another process's task.
const apiForeignPermissionFmt = "task %s belongs to another OpenCode process on this project: answer its request there; nothing was sent"

// permissionOutputFmt is asyncagents_output's line for a task waiting for the user.
const permissionOutputFmt = "waiting for permission: %s (asked %s ago); the user answers it in OpenCode's TUI or the asyncagents dashboard\n"
