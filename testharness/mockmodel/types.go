// Package mockmodel is a scripted OpenAI-compatible chat model for end-to-end
// tests. OpenCode talks to it through its bundled "@ai-sdk/openai-compatible"
// provider (options.baseURL = Server.URL()), so a test decides every model
// turn (text, tool calls, errors, delays) without a network or an API key.
//
// A Script sees each request as a simplified Request and returns a Reply. The
// title-generation request OpenCode sends for every new session is answered
// automatically, so scripts only see the turns a test cares about.
package mockmodel

import (
	"encoding/json"
	"net/http"
	"time"
)

// ToolCall is one function call, either received (in an assistant message of
// the history) or to send (in a Reply). An empty ID in a Reply gets a unique
// "call_<n>".
type ToolCall struct {
	ID   string
	Name string
	Args map[string]any
}

// Message is one non-system message of the conversation the client sent.
// Content joins the text parts when the content arrived as an array.
type Message struct {
	Role       string
	Content    string
	ToolCalls  []ToolCall
	ToolCallID string
}

// Request is what a Script sees of one chat-completions call.
type Request struct {
	Model    string
	System   string    // all system messages, joined by "\n\n"
	Messages []Message // every non-system message, in order
	LastUser string    // text of the last user-role message
	Tools    []string  // names of the offered function tools
	Title    bool      // OpenCode's title-generation request
	Stream   bool
	Received time.Time
	Raw      json.RawMessage // the request body as received
}

// Reply is one scripted model answer.
//
// Text and ToolCalls may both be set: the text streams first. Status other
// than 0 and 200 answers that HTTP status with ErrorBody (an OpenAI-style
// error object when empty). Delay sleeps before the first byte, ending early
// when the client goes away. Header adds response headers (e.g.
// "retry-after-ms", which OpenCode honours between its retries). FinishReason overrides the computed one ("stop",
// or "tool_calls" when ToolCalls is set); "length" simulates truncation.
type Reply struct {
	Text         string
	ToolCalls    []ToolCall
	Delay        time.Duration
	Status       int
	ErrorBody    string
	FinishReason string
	Header       http.Header
}

// Script decides the reply to one request. It may be called concurrently.
type Script func(Request) Reply

// Text is a Script that always answers with the same text.
func Text(s string) Script { return func(Request) Reply { return Reply{Text: s} } }
