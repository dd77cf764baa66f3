package forkctx

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// forkMsgs builds a GET /session/:id/message answer: each message is a role and its parts.
func forkMsgs(t *testing.T, msgs ...any) json.RawMessage {
	t.Helper()
	var out []map[string]any
	for i := 0; i < len(msgs); i += 2 {
		out = append(out, map[string]any{
			"info":  map[string]any{"id": fmt.Sprintf("msg_%03d", i/2), "role": msgs[i], "sessionID": "ses_parent"},
			"parts": msgs[i+1],
		})
	}
	raw, err := json.Marshal(out)
	require.NoError(t, err)
	return raw
}

func ftext(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

func ftool(name, callID, status string, input any, output string) map[string]any {
	state := map[string]any{"status": status, "input": input}
	switch status {
	case "completed":
		state["output"] = output
	case "error":
		state["error"] = output
	}
	return map[string]any{"type": "tool", "tool": name, "callID": callID, "state": state}
}

func parts(p ...map[string]any) []map[string]any { return p }

func TestBuildForkContext(t *testing.T) {
	long := strings.Repeat("é", 1000) + strings.Repeat("x", 3210) // 4,210 characters, 5,210 bytes
	tests := []struct {
		name string
		raw  json.RawMessage // when set, used instead of msgs
		msgs []any
		opt  ForkOptions
		want string // the text after the preamble and its blank line
		st   ForkStats
	}{
		{
			name: "labels and order",
			msgs: []any{"user", parts(ftext("Find the auth code")), "assistant", parts(ftext("It is in src/auth.ts."))},
			want: "User: Find the auth code\n\nAgent: It is in src/auth.ts.",
			st:   ForkStats{Messages: 2, KeptMessages: 2},
		},
		{
			name: "ignored text skipped, synthetic kept, reasoning and steps dropped",
			msgs: []any{
				"user", parts(ftext("hello"), map[string]any{"type": "text", "text": "hidden notice", "synthetic": true}, map[string]any{"type": "text", "text": "not sent", "ignored": true}),
				"assistant", parts(map[string]any{"type": "step-start"}, map[string]any{"type": "reasoning", "text": "thinking"}, map[string]any{"type": "step-finish"}),
				"assistant", parts(map[string]any{"type": "reasoning", "text": "more"}, ftext("  hi  "), map[string]any{"type": "patch", "hash": "abc", "files": []string{"a.go"}}),
			},
			want: "User: hello\nhidden notice\n\nAgent: hi",
			st:   ForkStats{Messages: 3, KeptMessages: 2},
		},
		{
			name: "tool call with its result, input compacted in its own key order",
			raw: json.RawMessage(`[{"info":{"id":"m1","role":"assistant"},"parts":[
				{"type":"tool","tool":"read","callID":"call_1","state":{"status":"completed","input":{ "filePath" : "/a.go", "limit": 20 },"output":"package a\n"}}]}]`),
			want: "Agent: [Tool: read] {\"filePath\":\"/a.go\",\"limit\":20}\n[Tool result (read, call ID call_1)]\npackage a",
			st:   ForkStats{Messages: 1, KeptMessages: 1},
		},
		{
			name: "parameter preview cut at 200 characters with an ellipsis",
			msgs: []any{"assistant", parts(ftool("write", "c2", "completed", map[string]any{"content": strings.Repeat("ü", 300)}, "ok"))},
			want: "Agent: [Tool: write] {\"content\":\"" + strings.Repeat("ü", 200-len(`{"content":"`)) + "…\n[Tool result (write, call ID c2)]\nok",
			st:   ForkStats{Messages: 1, KeptMessages: 1},
		},
		{
			name: "parameter preview of exactly 200 characters is whole",
			msgs: []any{"assistant", parts(ftool("write", "c2", "completed", map[string]any{"content": strings.Repeat("a", 200-len(`{"content":""}`))}, "ok"))},
			want: "Agent: [Tool: write] {\"content\":\"" + strings.Repeat("a", 200-len(`{"content":""}`)) + "\"}\n[Tool result (write, call ID c2)]\nok",
			st:   ForkStats{Messages: 1, KeptMessages: 1},
		},
		{
			name: "result over 1,500 characters truncated, with name, args, call ID and length",
			msgs: []any{"assistant", parts(ftool("bash", "call_9", "completed", map[string]any{"command": "cat big.log"}, long))},
			want: "Agent: [Tool: bash] {\"command\":\"cat big.log\"}\n" +
				"[Tool result truncated: 4,210 characters, first 1,500 shown (bash, call ID call_9)]\n" +
				strings.Repeat("é", 1000) + strings.Repeat("x", 500) + "…",
			st: ForkStats{Messages: 1, KeptMessages: 1, TruncatedToolResults: 1},
		},
		{
			name: "result of exactly 1,500 characters is whole",
			msgs: []any{"assistant", parts(ftool("bash", "c", "completed", map[string]any{}, strings.Repeat("é", 1500)))},
			want: "Agent: [Tool: bash] {}\n[Tool result (bash, call ID c)]\n" + strings.Repeat("é", 1500),
			st:   ForkStats{Messages: 1, KeptMessages: 1},
		},
		{
			name: "custom limits",
			msgs: []any{"assistant", parts(ftool("grep", "c", "completed", map[string]any{"pattern": "abcdef"}, "0123456789"))},
			opt:  ForkOptions{MaxToolResultChars: 4, MaxParamPreviewChars: 5},
			want: "Agent: [Tool: grep] {\"pat…\n[Tool result truncated: 10 characters, first 4 shown (grep, call ID c)]\n0123…",
			st:   ForkStats{Messages: 1, KeptMessages: 1, TruncatedToolResults: 1},
		},
		{
			name: "error, pending and empty results",
			msgs: []any{"assistant", parts(
				ftool("edit", "c1", "error", map[string]any{"filePath": "/x"}, "oldString not found"),
				ftool("asyncagents_task", "c2", "running", map[string]any{"fork": true}, ""),
				ftool("bash", "c3", "completed", nil, ""),
			)},
			want: "Agent: [Tool: edit] {\"filePath\":\"/x\"}\n[Tool error (edit, call ID c1)]\noldString not found\n" +
				"[Tool: asyncagents_task] {\"fork\":true}\n[Tool result (asyncagents_task, call ID c2)] none: the call had not finished when the session was forked\n" +
				"[Tool: bash] {}\n[Tool result (bash, call ID c3)] (empty)",
			st: ForkStats{Messages: 1, KeptMessages: 1},
		},
		{
			name: "files and subtasks",
			msgs: []any{"user", parts(ftext("look"), map[string]any{"type": "file", "filename": "shot.png", "mime": "image/png", "url": "data:..."},
				map[string]any{"type": "subtask", "description": "Find auth", "agent": "explore", "prompt": "p"})},
			want: "User: look\n[File: shot.png]\n[Subtask: Find auth (@explore)]",
			st:   ForkStats{Messages: 1, KeptMessages: 1},
		},
		{
			name: "no messages",
			raw:  json.RawMessage(`[]`),
			want: "",
			st:   ForkStats{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw := tc.raw
			if raw == nil {
				raw = forkMsgs(t, tc.msgs...)
			}
			got, st, err := BuildForkContext(raw, tc.opt)
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(got, ForkPreamble), "starts with the preamble")
			body := strings.TrimPrefix(strings.TrimPrefix(got, ForkPreamble), "\n\n")
			assert.Equal(t, tc.want, body)
			tc.st.Tokens = EstimateTokens(got)
			assert.Equal(t, tc.st, st)
		})
	}
}

func TestForkPreambleSaysTruncatedAndReRead(t *testing.T) {
	assert.Contains(t, ForkPreamble, "truncated")
	assert.Contains(t, ForkPreamble, "read it again")
}

func TestBuildForkContextBadJSON(t *testing.T) {
	for _, raw := range []string{``, `{`, `{"info":{}}`, `[{"parts":"x"}]`} {
		_, _, err := BuildForkContext(json.RawMessage(raw), ForkOptions{})
		assert.Error(t, err, raw)
	}
}

func TestBuildForkContextTokenLimit(t *testing.T) {
	// 40 turns of about 60 tokens each.
	var msgs []any
	for i := 0; i < 40; i++ {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs = append(msgs, role, parts(ftext(fmt.Sprintf("message %02d: %s", i, strings.Repeat("lorem ipsum dolor sit amet ", 10)))))
	}
	raw := forkMsgs(t, msgs...)

	whole, st, err := BuildForkContext(raw, ForkOptions{})
	require.NoError(t, err)
	require.Equal(t, 40, st.KeptMessages)
	require.False(t, strings.Contains(whole, "earlier message"))

	tests := []struct {
		name      string
		maxTokens int
	}{
		{"half", st.Tokens / 2},
		{"a tenth", st.Tokens / 10},
		{"one token short", st.Tokens - 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, s, err := BuildForkContext(raw, ForkOptions{MaxTokens: tc.maxTokens})
			require.NoError(t, err)
			assert.LessOrEqual(t, s.Tokens, tc.maxTokens)
			assert.Equal(t, EstimateTokens(got), s.Tokens)
			assert.Equal(t, 40, s.Messages)
			require.Greater(t, s.KeptMessages, 0)
			assert.Less(t, s.KeptMessages, 40)
			assert.True(t, strings.HasPrefix(got, ForkPreamble))
			// The newest messages are kept, in order; the oldest go, and a line says how many.
			note := fmt.Sprintf("[%d earlier messages left out to fit the context limit]", 40-s.KeptMessages)
			if s.KeptMessages == 39 {
				note = "[1 earlier message left out to fit the context limit]"
			}
			assert.Contains(t, got, ForkPreamble+"\n\n"+note+"\n\n")
			assert.True(t, strings.HasSuffix(got, "message 39: "+strings.TrimSpace(strings.Repeat("lorem ipsum dolor sit amet ", 10))))
			first := 40 - s.KeptMessages
			assert.Contains(t, got, fmt.Sprintf("message %02d:", first))
			assert.NotContains(t, got, fmt.Sprintf("message %02d:", first-1))
			// Adding the next older message would not have fitted.
			older := EstimateTokens(fmt.Sprintf("\n\nAgent: message %02d: %s", first-1, strings.TrimSpace(strings.Repeat("lorem ipsum dolor sit amet ", 10))))
			assert.Greater(t, s.Tokens+older, tc.maxTokens-2)
		})
	}
}

func TestBuildForkContextNewestMessageTooLarge(t *testing.T) {
	huge := strings.Repeat("word ", 5000) + "THE END"
	raw := forkMsgs(t, "user", parts(ftext("old question")), "user", parts(ftext(huge)))
	got, st, err := BuildForkContext(raw, ForkOptions{MaxTokens: 1000})
	require.NoError(t, err)
	assert.LessOrEqual(t, st.Tokens, 1000)
	assert.Greater(t, st.Tokens, 900, "as much of the message as fits")
	assert.Equal(t, 1, st.KeptMessages)
	assert.Contains(t, got, "[1 earlier message left out to fit the context limit]")
	assert.Contains(t, got, "User: [the first ")
	assert.Contains(t, got, " characters of this message left out to fit the context limit]\n…")
	assert.True(t, strings.HasSuffix(got, "word THE END"), "the end of the newest message is kept")
	assert.NotContains(t, got, "old question")

	// A limit below the preamble itself leaves the preamble alone.
	got, st, err = BuildForkContext(raw, ForkOptions{MaxTokens: 10})
	require.NoError(t, err)
	assert.Equal(t, 0, st.KeptMessages)
	assert.True(t, strings.HasPrefix(got, ForkPreamble))
	assert.Contains(t, got, "[2 earlier messages left out to fit the context limit]")
}

func TestBuildForkContextDefaults(t *testing.T) {
	raw := forkMsgs(t, "assistant", parts(ftool("bash", "c", "completed", map[string]any{"command": strings.Repeat("x", 300)}, strings.Repeat("y", 2000))))
	a, sa, err := BuildForkContext(raw, ForkOptions{})
	require.NoError(t, err)
	b, sb, err := BuildForkContext(raw, ForkOptions{MaxToolResultChars: 1500, MaxParamPreviewChars: 200, MaxTokens: 100000})
	require.NoError(t, err)
	assert.Equal(t, a, b)
	assert.Equal(t, sa, sb)
	c, _, err := BuildForkContext(raw, ForkOptions{MaxToolResultChars: -1, MaxParamPreviewChars: -5, MaxTokens: -9})
	require.NoError(t, err)
	assert.Equal(t, a, c, "negative options take the defaults")
}

func TestForkThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 4210: "4,210", 100000: "100,000", 1234567: "1,234,567", -4210: "-4,210"} {
		assert.Equal(t, want, forkThousands(n))
	}
}
