package ocserve

import (
	"encoding/json"
	"strings"
	"time"
)

// The types below hold the fields tests use; every one keeps the raw JSON
// too, since OpenCode adds fields between versions.

// SessionInfo is a session as GET /session/:id returns it.
type SessionInfo struct {
	ID        string `json:"id"`
	Slug      string `json:"slug"`
	ProjectID string `json:"projectID"`
	Directory string `json:"directory"`
	ParentID  string `json:"parentID"`
	Title     string `json:"title"`
	Version   string `json:"version"`
	Time      struct {
		Created int64 `json:"created"`
		Updated int64 `json:"updated"`
	} `json:"time"`
	Raw json.RawMessage `json:"-"`
}

func (s *SessionInfo) UnmarshalJSON(b []byte) error {
	type plain SessionInfo
	if err := json.Unmarshal(b, (*plain)(s)); err != nil {
		return err
	}
	s.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// SessionStatus is one entry of GET /session/status: type "busy" or
// "retry" (with attempt, message and next, the retry time in ms).
type SessionStatus struct {
	Type    string `json:"type"`
	Attempt int    `json:"attempt"`
	Message string `json:"message"`
	Next    int64  `json:"next"`
}

// Message is one entry of GET /session/:id/message.
type Message struct {
	Info  MessageInfo `json:"info"`
	Parts []Part      `json:"parts"`
}

// Text joins the message's text parts (synthetic ones included).
func (m Message) Text() string {
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Type == "text" {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// MessageInfo is a user or assistant message header. Error is set on an
// assistant message whose run failed (e.g. APIError after a 500).
type MessageInfo struct {
	ID         string          `json:"id"`
	SessionID  string          `json:"sessionID"`
	Role       string          `json:"role"`
	ParentID   string          `json:"parentID"`
	Agent      string          `json:"agent"`
	Mode       string          `json:"mode"`
	ModelID    string          `json:"modelID"`
	ProviderID string          `json:"providerID"`
	Finish     string          `json:"finish"`
	Error      *MessageError   `json:"error"`
	Time       MessageTime     `json:"time"`
	Model      map[string]any  `json:"model"`
	Raw        json.RawMessage `json:"-"`
}

func (m *MessageInfo) UnmarshalJSON(b []byte) error {
	type plain MessageInfo
	if err := json.Unmarshal(b, (*plain)(m)); err != nil {
		return err
	}
	m.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// MessageTime holds Unix milliseconds; Completed is 0 while running.
type MessageTime struct {
	Created   int64 `json:"created"`
	Completed int64 `json:"completed"`
}

// MessageError is OpenCode's named error: {name, data:{message,...}}.
type MessageError struct {
	Name string         `json:"name"`
	Data map[string]any `json:"data"`
}

// Message returns data.message, the human-readable text.
func (e *MessageError) Message() string {
	if e == nil {
		return ""
	}
	m, _ := e.Data["message"].(string)
	return m
}

// Part is one message part: text, reasoning, tool, step-start, step-finish,
// retry, subtask, file, patch...
type Part struct {
	ID        string          `json:"id"`
	SessionID string          `json:"sessionID"`
	MessageID string          `json:"messageID"`
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Synthetic bool            `json:"synthetic"`
	Ignored   bool            `json:"ignored"`
	Tool      string          `json:"tool"`
	CallID    string          `json:"callID"`
	State     ToolState       `json:"state"`
	Raw       json.RawMessage `json:"-"`
}

func (p *Part) UnmarshalJSON(b []byte) error {
	type plain Part
	if err := json.Unmarshal(b, (*plain)(p)); err != nil {
		return err
	}
	p.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// ToolState is a tool part's state: status pending, running, completed or
// error, with output (completed) or error (error).
type ToolState struct {
	Status   string         `json:"status"`
	Input    map[string]any `json:"input"`
	Output   string         `json:"output"`
	Error    string         `json:"error"`
	Title    string         `json:"title"`
	Metadata map[string]any `json:"metadata"`
	Time     struct {
		Start int64 `json:"start"`
		End   int64 `json:"end"`
	} `json:"time"`
}

// Event is one frame of GET /event. At is when the harness received it.
type Event struct {
	Type       string          `json:"type"`
	Properties json.RawMessage `json:"properties"`
	At         time.Time       `json:"-"`
}

// SessionID digs properties.sessionID, properties.info.sessionID (or
// info.id for session.* events) and properties.part.sessionID.
func (e Event) SessionID() string {
	var p struct {
		SessionID string `json:"sessionID"`
		Info      struct {
			ID        string `json:"id"`
			SessionID string `json:"sessionID"`
		} `json:"info"`
		Part struct {
			SessionID string `json:"sessionID"`
		} `json:"part"`
	}
	_ = json.Unmarshal(e.Properties, &p)
	switch {
	case p.SessionID != "":
		return p.SessionID
	case p.Info.SessionID != "":
		return p.Info.SessionID
	case p.Part.SessionID != "":
		return p.Part.SessionID
	}
	return p.Info.ID
}

// PromptBody is the body of POST /session/:id/prompt_async.
type PromptBody struct {
	Agent   string          `json:"agent,omitempty"`
	Model   *ModelRef       `json:"model,omitempty"`
	NoReply bool            `json:"noReply,omitempty"`
	Tools   map[string]bool `json:"tools,omitempty"`
	System  string          `json:"system,omitempty"`
	Parts   []TextPart      `json:"parts"`
}

// ModelRef names a model: {"providerID":"mock","modelID":"mock-b"}.
type ModelRef struct {
	ProviderID string `json:"providerID"`
	ModelID    string `json:"modelID"`
}

// TextPart is a text input part; Synthetic marks text the user did not type.
type TextPart struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	Synthetic bool   `json:"synthetic,omitempty"`
}
