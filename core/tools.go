package core

// Tool names.
const (
	ToolTask   = "asyncagents_task"
	ToolOutput = "asyncagents_output"
	ToolCancel = "asyncagents_cancel"
	ToolList   = "asyncagents_list"
	ToolClear  = "asyncagents_clear"
	// ToolMessage steers a running task (tool_message.go).
	ToolMessage = "asyncagents_message"
)

// ToolSpec describes one tool for the hosts, which turn it into their own schema type
// (tool.schema in the plugin). Descriptions live here so that every host teaches the model the
// same thing.
type ToolSpec struct {
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Args        []ArgSpec `json:"args"`
}

// ArgSpec is one tool argument. Type is "string", "boolean", "number" or "object".
type ArgSpec struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Required    bool   `json:"required,omitempty"`
	Description string `json:"description"`
	// Fields are the fields of an argument of type "object", each optional unless Required.
	Fields []ArgSpec `json:"fields,omitempty"`
}

// childDeniedTools are the tools a background child may not use: it cannot manage the parent's
// todo list, cannot ask the user anything (nobody is waiting on it), and cannot delegate. They are
// denied as session permissions at creation only: a prompt's `tools` field would replace the
// session's whole permission list in OpenCode 1.18, so the child's prompt carries none.
var childDeniedTools = []string{"todowrite", "todoread", "question"}

// delegationTools are denied too, unless the child's agent has delegation rights.
var delegationTools = []string{"task", ToolTask, ToolOutput, ToolCancel, ToolList, ToolClear, ToolMessage}

func childPermission(canDelegate bool) []PermissionRule {
	denied := childDeniedTools
	if !canDelegate {
		denied = append(append([]string{}, childDeniedTools...), delegationTools...)
	}
	rules := make([]PermissionRule, 0, len(denied))
	for _, t := range denied {
		rules = append(rules, PermissionRule{Permission: t, Pattern: "*", Action: "deny"})
	}
	return rules
}

// onToolCall routes a tool call to its tool.
func (m *Machine) onToolCall(ev Event) {
	switch ev.Tool { // hooks of OpenCode's, not a model's calls
	case HookCompacting:
		m.onCompactingHook(ev) // the session is compacting
		return
	case HookTurnEnd:
		m.onTurnEndHook(ev) // a text part of a headless run's answer ends
		return
	case HookStopping:
		m.onStoppingHook(ev) // the process was told to stop
		return
	}
	if ev.SessionID != "" {
		m.onParentStatus(ev.SessionID, true) // a session running a tool is busy
	}
	switch ev.Tool {
	case ToolTask:
		if m.configError != "" {
			// A launch on a config the user did not mean (a chain ignored) would be worse.
			m.failTool(ev.CallID, m.configError)
			return
		}
		m.onTaskCall(ev)
	case ToolOutput:
		m.onOutputCall(ev)
	case ToolCancel:
		m.onCancelCall(ev)
	case ToolList:
		m.onListCall(ev)
	case ToolClear:
		m.onClearCall(ev)
	case ToolMessage:
		m.onMessageCall(ev)
	case ToolMerge:
		m.onMergeCall(ev)
	default:
		m.failTool(ev.CallID, unknownToolPrefix+quote(ev.Tool))
	}
}

// onToolAborted drops a blocked output call whose parent turn was stopped.
func (m *Machine) onToolAborted(callID string) {
	if w, ok := m.waiters[callID]; ok {
		delete(m.waiters, callID)
		m.emit(Effect{Kind: EffectTimerClear, TimerID: waitTimer(callID)})
		m.failTool(callID, abortedWaitingPrefix+w.taskID)
	}
}
