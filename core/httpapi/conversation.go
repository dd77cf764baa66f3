package httpapi

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/asyncagents/asyncagents/core/task"
)

// GET /v1/tasks/:id/messages: a child's conversation in one shape, whoever serves it. A host that
// can read OpenCode fetches the session's messages and hands them to Conversation; a host that
// cannot (asyncagents serve) writes the answer's Body, the conversation the history keeps.

// APIConversation is /v1/tasks/:id/messages's answer.
type APIConversation struct {
	Messages []APIMessage `json:"messages"`
	// FromHistory: OpenCode was not asked (asyncagents serve, or a task with no session yet); the
	// messages are what the task history keeps: the prompt, and the result or the partial work.
	FromHistory bool `json:"fromHistory,omitempty"`
	// Note says, with FromHistory, why only the history's messages are shown: a page draws it as
	// it is.
	Note string `json:"note,omitempty"`
}

// The notes of a conversation from the history. This server cannot tell whether OpenCode runs (a
// read-only `asyncagents serve` never asks it), so the note says what this server reads.
const (
	noteQueued      = "No session yet: the task waits for a slot."
	noteHistoryOnly = "From the task history, which keeps the prompt and the outcome: this server reads the history, not OpenCode's sessions. The plugin's live server shows the whole conversation (asyncagents dashboard opens it while OpenCode runs the plugin)."
)

// APIMessage is one message of a child's conversation.
type APIMessage struct {
	ID   string `json:"id"`
	Role string `json:"role"` // user or assistant
	// Type says what the message is: "prompt" (what the child was asked), "reply" (text it
	// wrote), "tools" (tool calls and no text), "partial" (the history's last text of a task that
	// did not finish), "error" (a turn that failed: Content says why).
	Type      string        `json:"type"`
	Content   string        `json:"content"`
	ToolCalls []APIToolCall `json:"toolCalls"`
	Timestamp int64         `json:"timestamp"` // ms since the epoch (a reply's end); 0 when not known
}

// APIToolCall is one tool the child ran, as far as it got: Status is OpenCode's (pending,
// running, completed, error); Output and Error are cut at ConversationMaxToolText characters.
type APIToolCall struct {
	Name   string          `json:"name"`
	Title  string          `json:"title,omitempty"`
	Status string          `json:"status,omitempty"`
	Input  json.RawMessage `json:"input"`
	Output string          `json:"output,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// ConversationMaxToolText bounds each tool call's output and error, and its input's JSON: a
// file read whole would otherwise make a page of megabytes.
const ConversationMaxToolText = 4000

// Message types.
const (
	MsgPrompt  = "prompt"
	MsgReply   = "reply"
	MsgTools   = "tools"
	MsgPartial = "partial"
	MsgError   = "error"
)

// ocMessage is the part of OpenCode's message ({info, parts}) the conversation reads.
type ocMessage struct {
	Info struct {
		ID   string `json:"id"`
		Role string `json:"role"`
		Time struct {
			Created   int64 `json:"created"`
			Completed int64 `json:"completed"`
		} `json:"time"`
		Error *struct {
			Name string `json:"name"`
			Data struct {
				Message string `json:"message"`
			} `json:"data"`
		} `json:"error"`
	} `json:"info"`
	Parts []struct {
		Type  string `json:"type"`
		Text  string `json:"text"`
		Tool  string `json:"tool"`
		State struct {
			Status string          `json:"status"`
			Input  json.RawMessage `json:"input"`
			Output string          `json:"output"`
			Error  string          `json:"error"`
			Title  string          `json:"title"`
		} `json:"state"`
	} `json:"parts"`
}

// Conversation answers /v1/tasks/:id/messages from OpenCode's messages of the task's session
// (raw, as OpenCode's API gives them: [{info, parts}]). Text that is not an array of messages is
// OpenCode's fault, not the client's: 502.
func Conversation(raw []byte) Response {
	var msgs []ocMessage
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return apiFail(502, "could not read the task's messages: OpenCode's answer is not a list of messages: "+err.Error())
	}
	out := APIConversation{Messages: make([]APIMessage, 0, len(msgs))}
	for _, m := range msgs {
		out.Messages = append(out.Messages, normalize(m))
	}
	return apiJSON(out)
}

// normalize turns one OpenCode message into the conversation's shape. Reasoning, step and patch
// parts are left out: the log shows what the child said and did.
func normalize(m ocMessage) APIMessage {
	// A reply is dated when it was done, not when the model began it (a long step took minutes).
	at := m.Info.Time.Created
	if m.Info.Role == "assistant" && m.Info.Time.Completed > 0 {
		at = m.Info.Time.Completed
	}
	msg := APIMessage{ID: m.Info.ID, Role: m.Info.Role, Timestamp: at, ToolCalls: []APIToolCall{}}
	var text []string
	for _, p := range m.Parts {
		switch p.Type {
		case "text":
			if p.Text != "" {
				text = append(text, p.Text)
			}
		case "tool":
			input := p.State.Input
			if len(input) == 0 || len(input) > ConversationMaxToolText || !json.Valid(input) {
				input = json.RawMessage("null")
				if len(p.State.Input) > ConversationMaxToolText {
					input, _ = json.Marshal(cut(string(p.State.Input)))
				}
			}
			msg.ToolCalls = append(msg.ToolCalls, APIToolCall{Name: p.Tool, Title: p.State.Title, Status: p.State.Status, Input: input, Output: cut(p.State.Output), Error: cut(p.State.Error)})
		}
	}
	msg.Content = strings.Join(text, "\n\n")
	switch {
	case m.Info.Role == "user":
		msg.Type = MsgPrompt
	case m.Info.Error != nil:
		msg.Type = MsgError
		why := m.Info.Error.Data.Message
		if why == "" {
			why = m.Info.Error.Name
		}
		if msg.Content != "" {
			why = msg.Content + "\n\n" + why
		}
		msg.Content = why
	case msg.Content == "" && len(msg.ToolCalls) > 0:
		msg.Type = MsgTools
	default:
		msg.Type = MsgReply
	}
	return msg
}

// cut bounds a tool's text at ConversationMaxToolText characters, saying so.
func cut(s string) string {
	if utf8.RuneCountInString(s) <= ConversationMaxToolText {
		return s
	}
	r := []rune(s)
	return string(r[:ConversationMaxToolText]) + "\n… (cut)"
}

// historyConversation is t's conversation as the history keeps it: its prompt, then its result,
// or the partial work of a task that did not finish and why it ended.
func historyConversation(t *task.Task) APIConversation {
	c := APIConversation{FromHistory: true, Note: noteHistoryOnly, Messages: []APIMessage{{ID: t.ID + ":prompt", Role: "user", Type: MsgPrompt, Content: t.Prompt, ToolCalls: []APIToolCall{}, Timestamp: t.StartedAt}}}
	if t.ChildSession() == "" {
		c.Note = noteQueued
	}
	end := t.CompletedAt
	if end == 0 {
		end = t.Progress.LastUpdate
	}
	if t.Partial != nil && (t.Partial.Text != "" || len(t.Partial.Tools) > 0) {
		m := APIMessage{ID: t.ID + ":partial", Role: "assistant", Type: MsgPartial, Content: t.Partial.Text, ToolCalls: []APIToolCall{}, Timestamp: end}
		for _, tool := range t.Partial.Tools {
			m.ToolCalls = append(m.ToolCalls, APIToolCall{Name: tool.Name, Title: tool.Title, Status: "completed", Input: json.RawMessage("null")})
		}
		c.Messages = append(c.Messages, m)
	}
	switch {
	case t.Result != "":
		c.Messages = append(c.Messages, APIMessage{ID: t.ID + ":result", Role: "assistant", Type: MsgReply, Content: t.Result, ToolCalls: []APIToolCall{}, Timestamp: end})
	case t.Error != nil:
		c.Messages = append(c.Messages, APIMessage{ID: t.ID + ":error", Role: "assistant", Type: MsgError, Content: t.Error.Message, ToolCalls: []APIToolCall{}, Timestamp: end})
	}
	return c
}

// apiServeMessages answers GET /v1/tasks/:id/messages: the history's conversation as the Body,
// and the session to read for a host that can ask OpenCode.
func apiServeMessages(t *task.Task, now int64) Response {
	history := historyConversation(apiOut(t, now))
	r := apiJSON(history)
	r.Messages = t.ChildSession()
	return r
}
