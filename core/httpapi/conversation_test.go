package httpapi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

// OpenCode's messages, as its API gives them, become the conversation's one shape.
func TestConversationNormalizesOpenCodeMessages(t *testing.T) {
	long := strings.Repeat("x", ConversationMaxToolText+10)
	cases := []struct {
		name string
		raw  string
		want []APIMessage
	}{
		{"the prompt", `[{"info":{"id":"msg_1","role":"user","time":{"created":100}},"parts":[{"type":"text","text":"Find the bug"}]}]`,
			[]APIMessage{{ID: "msg_1", Role: "user", Type: MsgPrompt, Content: "Find the bug", ToolCalls: []APIToolCall{}, Timestamp: 100}}},
		{"a reply: its texts joined, reasoning and steps left out, dated at its end", `[{"info":{"id":"msg_2","role":"assistant","time":{"created":200,"completed":300}},
			"parts":[{"type":"step-start"},{"type":"reasoning","text":"hmm"},{"type":"text","text":"Found it."},{"type":"text","text":"In main.go."}]}]`,
			[]APIMessage{{ID: "msg_2", Role: "assistant", Type: MsgReply, Content: "Found it.\n\nIn main.go.", ToolCalls: []APIToolCall{}, Timestamp: 300}}},
		{"tool calls with their inputs, outputs and errors", `[{"info":{"id":"msg_3","role":"assistant","time":{"created":300}},"parts":[
			{"type":"tool","tool":"read","state":{"status":"completed","input":{"filePath":"a.go"},"output":"package a","title":"a.go"}},
			{"type":"tool","tool":"bash","state":{"status":"error","input":{"command":"false"},"error":"exit 1"}},
			{"type":"tool","tool":"grep","state":{"status":"running","input":{}}}]}]`,
			[]APIMessage{{ID: "msg_3", Role: "assistant", Type: MsgTools, ToolCalls: []APIToolCall{
				{Name: "read", Title: "a.go", Status: "completed", Input: json.RawMessage(`{"filePath":"a.go"}`), Output: "package a"},
				{Name: "bash", Status: "error", Input: json.RawMessage(`{"command":"false"}`), Error: "exit 1"},
				{Name: "grep", Status: "running", Input: json.RawMessage(`{}`)},
			}, Timestamp: 300}}},
		{"a turn that failed says why", `[{"info":{"id":"msg_4","role":"assistant","time":{"created":400},"error":{"name":"APIError","data":{"message":"rate limited"}}},"parts":[]}]`,
			[]APIMessage{{ID: "msg_4", Role: "assistant", Type: MsgError, Content: "rate limited", ToolCalls: []APIToolCall{}, Timestamp: 400}}},
		{"a long output is cut, and says so", `[{"info":{"id":"msg_5","role":"assistant","time":{"created":500}},"parts":[{"type":"tool","tool":"read","state":{"status":"completed","input":{},"output":"` + long + `"}}]}]`,
			[]APIMessage{{ID: "msg_5", Role: "assistant", Type: MsgTools, ToolCalls: []APIToolCall{
				{Name: "read", Status: "completed", Input: json.RawMessage(`{}`), Output: long[:ConversationMaxToolText] + "\n… (cut)"},
			}, Timestamp: 500}}},
		{"no messages yet", `[]`, []APIMessage{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Conversation([]byte(c.raw))
			require.Equal(t, 200, r.Status, r.Body)
			var got APIConversation
			require.NoError(t, json.Unmarshal([]byte(r.Body), &got))
			require.False(t, got.FromHistory)
			require.Equal(t, c.want, got.Messages)
		})
	}
}

func TestConversationOfSomethingElseIsOpenCodesFault(t *testing.T) {
	r := Conversation([]byte(`{"error":"no such session"}`))
	require.Equal(t, 502, r.Status)
	require.Contains(t, r.Body, "could not read the task's messages")
}

// The route names the session to read, and its body is what the history keeps: a host with no
// OpenCode (asyncagents serve) answers with it.
func TestMessagesRouteFromHistory(t *testing.T) {
	cfg := config.APIConfig{Token: "s3cret"}
	failed := task.Task{ID: "bg_1", SessionID: "ses_1", Status: task.StatusError, Prompt: "Refactor", StartedAt: 10, CompletedAt: 90,
		Error:   &task.TaskError{Name: "Timeout", Message: "timed out after 1m"},
		Partial: &task.Partial{Text: "Half done", Tools: []task.ToolRun{{Name: "edit", Title: "a.go"}}}}
	done := task.Task{ID: "bg_2", SessionID: "ses_2", Status: task.StatusCompleted, Prompt: "Summarize", StartedAt: 20, CompletedAt: 50, Result: "All good"}
	queued := task.Task{ID: "bg_3", Status: task.StatusRunning, Queued: true, Prompt: "Wait", StartedAt: 30}
	tasks := []*task.Task{&failed, &done, &queued}

	cases := []struct {
		id      string
		session string
		types   []string
		content []string
	}{
		{"ses_1", "ses_1", []string{MsgPrompt, MsgPartial, MsgError}, []string{"Refactor", "Half done", "timed out after 1m"}},
		{"bg_2", "ses_2", []string{MsgPrompt, MsgReply}, []string{"Summarize", "All good"}},
		{"bg_3", "", []string{MsgPrompt}, []string{"Wait"}},
	}
	for _, c := range cases {
		t.Run(c.id, func(t *testing.T) {
			r := Serve(apiGet("/v1/tasks/"+c.id+"/messages", ""), tasks, cfg, 100)
			require.Equal(t, 200, r.Status, r.Body)
			require.Equal(t, c.session, r.Messages)
			var got APIConversation
			require.NoError(t, json.Unmarshal([]byte(r.Body), &got))
			require.True(t, got.FromHistory)
			var types, content []string
			for _, m := range got.Messages {
				types, content = append(types, m.Type), append(content, m.Content)
			}
			require.Equal(t, c.types, types)
			require.Equal(t, c.content, content)
		})
	}
	r := Serve(apiGet("/v1/tasks/ses_1/messages", ""), tasks, cfg, 100)
	require.Contains(t, r.Body, `"toolCalls":[{"name":"edit","title":"a.go","status":"completed","input":null}]`)
	// Without the token, nothing.
	r = Serve(apiWith(apiGet("/v1/tasks/ses_1/messages", ""), "authorization", ""), tasks, cfg, 100)
	require.Equal(t, 401, r.Status)
	require.Empty(t, r.Messages)
}
