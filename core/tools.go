package core

// Tool names.
const (
	ToolTask   = "asyncagents_task"
	ToolOutput = "asyncagents_output"
)

// ToolSpec describes one tool for the hosts, which turn it into their own schema type
// (tool.schema in the plugin). Descriptions live here so that every host teaches the model the
// same thing.
type ToolSpec struct {
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Args        []ArgSpec `json:"args"`
}

// ArgSpec is one tool argument. Type is "string", "boolean" or "number".
type ArgSpec struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Required    bool   `json:"required,omitempty"`
	Description string `json:"description"`
}

// Tools lists the tools the plugin registers.
func Tools() []ToolSpec {
	return []ToolSpec{
		{
			Name: ToolTask,
			Description: `Launch a subagent in the background and keep working while it runs.

Use this instead of the task tool when the work can run in parallel with yours or with other subagents: call asyncagents_task several times in one turn to fan work out. Each call returns at once with a task_id.

When a task finishes, a notice arrives in this conversation with its result, so you do not need to poll. If you have nothing else to do, say that you are waiting and stop; you will be woken. To read a result (or check progress) before the notice, call asyncagents_output with the task_id.

The subagent starts with a fresh context: put everything it needs in the prompt (files, goals, what to return).`,
			Args: []ArgSpec{
				{Name: "description", Type: "string", Required: true, Description: "A short (3-5 words) label for the task, shown in notices and in the TUI"},
				{Name: "prompt", Type: "string", Required: true, Description: "The full task for the subagent, with all the context it needs"},
				{Name: "agent", Type: "string", Required: true, Description: "The subagent to run (a non-primary agent, e.g. general or explore)"},
			},
		},
		{
			Name: ToolOutput,
			Description: `Get the result of a background task launched with asyncagents_task, or its progress while it runs.

It answers at once by default. Set block to true to wait until the task finishes (or until timeout seconds pass); prefer not to block while you have other work, since a notice arrives by itself when the task is done.`,
			Args: []ArgSpec{
				{Name: "task_id", Type: "string", Required: true, Description: "The task_id returned by asyncagents_task"},
				{Name: "block", Type: "boolean", Description: "Wait until the task finishes (default false)"},
				{Name: "timeout", Type: "number", Description: "With block: the most seconds to wait (default 120, at most 600)"},
			},
		},
	}
}

// childDeniedTools are the tools a background child may not use: it cannot manage the parent's
// todo list, cannot ask the user anything (nobody is waiting on it), and cannot delegate. They are
// denied as session permissions at creation only: a prompt's `tools` field would replace the
// session's whole permission list in OpenCode 1.18, so the child's prompt carries none.
var childDeniedTools = []string{"todowrite", "todoread", "task", "question", ToolTask, ToolOutput}

func childPermission() []PermissionRule {
	rules := make([]PermissionRule, 0, len(childDeniedTools))
	for _, t := range childDeniedTools {
		rules = append(rules, PermissionRule{Permission: t, Pattern: "*", Action: "deny"})
	}
	return rules
}

// onToolCall routes a tool call to its tool.
func (m *Machine) onToolCall(ev Event) {
	switch ev.Tool {
	case ToolTask:
		m.onTaskCall(ev)
	case ToolOutput:
		m.onOutputCall(ev)
	default:
		m.failTool(ev.CallID, "unknown tool "+quote(ev.Tool))
	}
}

// onToolAborted drops a blocked output call whose parent turn was stopped.
func (m *Machine) onToolAborted(callID string) {
	if w, ok := m.waiters[callID]; ok {
		delete(m.waiters, callID)
		m.emit(Effect{Kind: EffectTimerClear, TimerID: waitTimer(callID)})
		m.failTool(callID, "aborted while waiting for task "+w.taskID)
	}
}
