package mockmodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// answer is a Reply made ready to send: IDs filled, finish reason decided.
type answer struct {
	id, model string
	created   int64
	text      string
	calls     []ToolCall
	finish    string
	usage     map[string]int
}

func (a answer) base() map[string]any {
	return map[string]any{"id": a.id, "created": a.created, "model": a.model}
}

func (a answer) wireCalls(withIndex bool) []map[string]any {
	out := make([]map[string]any, 0, len(a.calls))
	for i, c := range a.calls {
		args := c.Args
		if args == nil {
			args = map[string]any{}
		}
		b, _ := json.Marshal(args)
		m := map[string]any{"id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": string(b)}}
		if withIndex {
			m["index"] = i
		}
		out = append(out, m)
	}
	return out
}

// writeStream sends the answer as chat.completion.chunk SSE frames: a role
// frame, text deltas, one frame per tool call, the finish frame, the usage
// frame when asked for, then [DONE]. Each frame is flushed so the client sees
// a real stream.
func writeStream(w http.ResponseWriter, a answer, includeUsage bool) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		_ = rc.Flush()
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		m := a.base()
		m["object"] = "chat.completion.chunk"
		m["choices"] = []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}
		return m
	}
	send(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	for _, piece := range splitText(a.text) {
		send(chunk(map[string]any{"content": piece}, nil))
	}
	for _, c := range a.wireCalls(true) {
		send(chunk(map[string]any{"tool_calls": []any{c}}, nil))
	}
	send(chunk(map[string]any{}, a.finish))
	if includeUsage {
		m := a.base()
		m["object"] = "chat.completion.chunk"
		m["choices"] = []any{}
		m["usage"] = a.usage
		send(m)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	_ = rc.Flush()
}

// writeJSON sends the answer as one non-streaming chat.completion object.
func writeJSON(w http.ResponseWriter, a answer) {
	msg := map[string]any{"role": "assistant", "content": a.text}
	if len(a.calls) > 0 {
		msg["tool_calls"] = a.wireCalls(false)
	}
	m := a.base()
	m["object"] = "chat.completion"
	m["choices"] = []any{map[string]any{"index": 0, "message": msg, "finish_reason": a.finish}}
	m["usage"] = a.usage
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(m)
}

// writeError answers an HTTP error status, with an OpenAI-style error object
// unless the script gave its own body.
func writeError(w http.ResponseWriter, status int, body string) {
	if body == "" {
		typ := "server_error"
		switch {
		case status == http.StatusTooManyRequests:
			typ = "rate_limit_error"
		case status == http.StatusUnauthorized:
			typ = "authentication_error"
		case status < 500:
			typ = "invalid_request_error"
		}
		b, _ := json.Marshal(map[string]any{"error": map[string]any{
			"message": fmt.Sprintf("mock model error: %d %s", status, http.StatusText(status)),
			"type":    typ, "code": status,
		}})
		body = string(b)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprint(w, body)
}

// splitText cuts text into word-sized deltas (spaces kept) so clients
// exercise their delta handling.
func splitText(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexByte(s[1:], ' ')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// usageFor estimates token counts at four bytes per token.
func usageFor(req []byte, a answer) map[string]int {
	p := len(req)/4 + 1
	c := len(a.text) / 4
	for _, tc := range a.calls {
		b, _ := json.Marshal(tc.Args)
		c += (len(tc.Name) + len(b)) / 4
	}
	c++
	return map[string]int{"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}
}
