package mockmodel

import (
	"encoding/json"
	"strings"
)

// wireRequest is the subset of an OpenAI chat-completions body we read.
type wireRequest struct {
	Model         string        `json:"model"`
	Messages      []wireMessage `json:"messages"`
	Stream        bool          `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// titleMarker identifies OpenCode's title agent by its system prompt
// ("You are a title generator. You output ONLY a thread title..."), which is
// stable across versions, unlike its user text.
const titleMarker = "title generator"

// parseRequest turns a chat-completions body into a Request. Content may be a
// string or an array of parts: text parts are joined with "\n".
func parseRequest(body []byte) (Request, wireRequest, error) {
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return Request{}, w, err
	}
	r := Request{Model: w.Model, Stream: w.Stream, Raw: json.RawMessage(body)}
	var system []string
	for _, m := range w.Messages {
		text := contentText(m.Content)
		if m.Role == "system" || m.Role == "developer" {
			system = append(system, text)
			continue
		}
		msg := Message{Role: m.Role, Content: text, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			var args map[string]any
			_ = json.Unmarshal([]byte(tc.Function.Arguments), &args)
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Args: args})
		}
		if m.Role == "user" {
			r.LastUser = text
		}
		r.Messages = append(r.Messages, msg)
	}
	r.System = strings.Join(system, "\n\n")
	for _, t := range w.Tools {
		r.Tools = append(r.Tools, t.Function.Name)
	}
	r.Title = strings.Contains(strings.ToLower(r.System), titleMarker)
	return r, w, nil
}

// contentText reads a message content that is either a JSON string or an
// array of parts ({"type":"text","text":...}); other part types are skipped.
func contentText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return string(raw)
	}
	var texts []string
	for _, p := range parts {
		if p.Type == "text" || (p.Type == "" && p.Text != "") {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}
