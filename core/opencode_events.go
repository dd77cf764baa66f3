package core

import "encoding/json"

// SubscribedEvents are the OpenCode event types the core reads. Hosts forward only these, so the
// busy stream of text deltas never crosses into the core.
func SubscribedEvents() []string {
	return []string{"session.idle", "session.status", "session.error", "message.part.updated"}
}

func (m *Machine) onOpenCode(e OpenCodeEvent) {
	switch e.Type {
	case "session.idle":
		var p struct {
			SessionID string `json:"sessionID"`
		}
		if json.Unmarshal(e.Properties, &p) == nil {
			m.onChildIdle(p.SessionID)
		}
	case "session.status":
		var p struct {
			SessionID string `json:"sessionID"`
			Status    struct {
				Type string `json:"type"`
			} `json:"status"`
		}
		if json.Unmarshal(e.Properties, &p) == nil && p.Status.Type == "idle" {
			m.onChildIdle(p.SessionID)
		}
	case "session.error":
		var p struct {
			SessionID string `json:"sessionID"`
			Error     *struct {
				Name string `json:"name"`
				Data struct {
					Message string `json:"message"`
				} `json:"data"`
			} `json:"error"`
		}
		if json.Unmarshal(e.Properties, &p) != nil || p.Error == nil {
			return
		}
		if t := m.tasks[p.SessionID]; t != nil && !t.Status.Terminal() {
			msg := p.Error.Data.Message
			if msg == "" {
				msg = p.Error.Name
			}
			t.sessionError = &TaskError{Name: p.Error.Name, Message: msg}
		}
	case "message.part.updated":
		m.onPartUpdated(e.Properties)
	}
}

// onChildIdle starts the completion check of a task whose child says it is idle.
func (m *Machine) onChildIdle(sessionID string) {
	t := m.tasks[sessionID]
	if t == nil || t.Status.Terminal() {
		return
	}
	m.checkTask(t, true)
}

// onPartUpdated counts the child's tool calls for progress.
func (m *Machine) onPartUpdated(props json.RawMessage) {
	var p struct {
		Part struct {
			SessionID string `json:"sessionID"`
			Type      string `json:"type"`
			CallID    string `json:"callID"`
			Tool      string `json:"tool"`
		} `json:"part"`
	}
	if json.Unmarshal(props, &p) != nil {
		return
	}
	t := m.tasks[p.Part.SessionID]
	if t == nil || t.Status.Terminal() {
		return
	}
	t.Progress.LastUpdate = m.now
	if p.Part.Type != "tool" || p.Part.CallID == "" || t.seenCalls[p.Part.CallID] {
		return
	}
	if t.seenCalls == nil {
		t.seenCalls = map[string]bool{}
	}
	t.seenCalls[p.Part.CallID] = true
	t.Progress.ToolCalls++
	t.Progress.LastTools = append(t.Progress.LastTools, p.Part.Tool)
	if n := len(t.Progress.LastTools); n > maxLastTools {
		t.Progress.LastTools = append([]string{}, t.Progress.LastTools[n-maxLastTools:]...)
	}
}
