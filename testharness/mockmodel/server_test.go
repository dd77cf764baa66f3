package mockmodel

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/internal/ssetest"
)

// post sends a chat-completions body with a bounded timeout.
func post(t *testing.T, ctx context.Context, s *Server, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/chat/completions", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// frames reads SSE data payloads until [DONE] (included) or EOF.
func frames(t *testing.T, r io.Reader) []string {
	t.Helper()
	var out []string
	frames := ssetest.NewReader(r)
	for {
		f, err := frames.Next()
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		out = append(out, f.Data)
	}
}

type chunk struct {
	Object  string `json:"object"`
	Choices []struct {
		Delta struct {
			Content   string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		TotalTokens int `json:"total_tokens"`
	} `json:"usage"`
}

func decodeChunks(t *testing.T, fs []string) []chunk {
	t.Helper()
	require.NotEmpty(t, fs)
	require.Equal(t, "[DONE]", fs[len(fs)-1])
	var out []chunk
	for _, f := range fs[:len(fs)-1] {
		var c chunk
		require.NoError(t, json.Unmarshal([]byte(f), &c), f)
		require.Equal(t, "chat.completion.chunk", c.Object)
		out = append(out, c)
	}
	return out
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

const textBody = `{"model":"mock-a","stream":true,"stream_options":{"include_usage":true},
 "tools":[{"type":"function","function":{"name":"bash","parameters":{}}}],
 "messages":[{"role":"system","content":"You are helpful."},
  {"role":"user","content":"first"},
  {"role":"assistant","content":"","tool_calls":[{"id":"c9","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]},
  {"role":"tool","tool_call_id":"c9","content":"a.txt"},
  {"role":"user","content":[{"type":"text","text":"hello"},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"world"}]}]}`

func TestTextStream(t *testing.T) {
	s := Start(t, Text("Hello there, general"))
	resp := post(t, ctxT(t), s, textBody)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))

	cs := decodeChunks(t, frames(t, resp.Body))
	var text strings.Builder
	var finish string
	for _, c := range cs[:len(cs)-1] {
		require.Len(t, c.Choices, 1)
		text.WriteString(c.Choices[0].Delta.Content)
		if f := c.Choices[0].FinishReason; f != nil {
			finish = *f
		}
	}
	assert.Equal(t, "Hello there, general", text.String())
	assert.Equal(t, "stop", finish)
	last := cs[len(cs)-1]
	assert.Empty(t, last.Choices, "usage chunk has no choices")
	require.NotNil(t, last.Usage)
	assert.Positive(t, last.Usage.TotalTokens)

	reqs := s.Requests()
	require.Len(t, reqs, 1)
	r := reqs[0]
	assert.Equal(t, "mock-a", r.Model)
	assert.Equal(t, "You are helpful.", r.System)
	assert.Equal(t, "hello\nworld", r.LastUser)
	assert.Equal(t, []string{"bash"}, r.Tools)
	assert.False(t, r.Title)
	require.Len(t, r.Messages, 4)
	assert.Equal(t, []ToolCall{{ID: "c9", Name: "bash", Args: map[string]any{"command": "ls"}}}, r.Messages[1].ToolCalls)
	assert.Equal(t, Message{Role: "tool", Content: "a.txt", ToolCallID: "c9"}, r.Messages[2])
}

func TestNoUsageUnlessAsked(t *testing.T) {
	s := Start(t, nil)
	resp := post(t, ctxT(t), s, `{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`)
	for _, c := range decodeChunks(t, frames(t, resp.Body)) {
		assert.Nil(t, c.Usage)
		assert.Len(t, c.Choices, 1)
	}
}

func TestToolCallStream(t *testing.T) {
	s := Start(t, func(Request) Reply {
		return Reply{Text: "Let me look.", ToolCalls: []ToolCall{
			{Name: "read", Args: map[string]any{"filePath": "/x"}},
			{ID: "mine", Name: "bash", Args: map[string]any{"command": "ls"}},
		}}
	})
	ctx := ctxT(t)
	for round := 0; round < 2; round++ {
		resp := post(t, ctx, s, `{"model":"m","stream":true,"messages":[{"role":"user","content":"go"}]}`)
		cs := decodeChunks(t, frames(t, resp.Body))
		var text strings.Builder
		var ids, names, args []string
		var finish string
		sawCallAfterText := false
		for _, c := range cs {
			d := c.Choices[0].Delta
			text.WriteString(d.Content)
			for _, tc := range d.ToolCalls {
				ids = append(ids, tc.ID)
				names = append(names, tc.Function.Name)
				args = append(args, tc.Function.Arguments)
				sawCallAfterText = text.String() == "Let me look."
			}
			if f := c.Choices[0].FinishReason; f != nil {
				finish = *f
			}
		}
		assert.Equal(t, "Let me look.", text.String())
		assert.True(t, sawCallAfterText, "text streams before tool calls")
		first := []string{"call_1", "call_2"}[round]
		assert.Equal(t, []string{first, "mine"}, ids, "IDs are unique across replies")
		assert.Equal(t, []string{"read", "bash"}, names)
		assert.JSONEq(t, `{"filePath":"/x"}`, args[0])
		assert.Equal(t, "tool_calls", finish)
	}
}

func TestErrorStatus(t *testing.T) {
	s := Start(t, func(r Request) Reply {
		if r.LastUser == "custom" {
			return Reply{Status: 429, ErrorBody: `{"error":{"message":"slow down"}}`}
		}
		return Reply{Status: 500}
	})
	ctx := ctxT(t)
	resp := post(t, ctx, s, `{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`)
	require.Equal(t, 500, resp.StatusCode)
	var body struct {
		Error struct{ Message, Type string } `json:"error"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	assert.Equal(t, "server_error", body.Error.Type)
	assert.Contains(t, body.Error.Message, "500")

	resp = post(t, ctx, s, `{"model":"m","stream":true,"messages":[{"role":"user","content":"custom"}]}`)
	require.Equal(t, 429, resp.StatusCode)
	b, _ := io.ReadAll(resp.Body)
	assert.JSONEq(t, `{"error":{"message":"slow down"}}`, string(b))
}

func TestDelay(t *testing.T) {
	s := Start(t, func(r Request) Reply { return Reply{Text: "late", Delay: 300 * time.Millisecond} })
	start := time.Now()
	resp := post(t, ctxT(t), s, `{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`)
	assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
	assert.Len(t, decodeChunks(t, frames(t, resp.Body)), 3) // role, text, finish
}

func TestDelayRespectsCancellation(t *testing.T) {
	s := Start(t, func(r Request) Reply { return Reply{Text: "never", Delay: time.Minute} })
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/chat/completions",
		strings.NewReader(`{"model":"m","stream":true,"messages":[]}`))
	start := time.Now()
	_, err := http.DefaultClient.Do(req)
	require.Error(t, err)
	// Close waits for nothing but the listener; a handler still sleeping a
	// minute would not stop Shutdown, so check Shutdown finishes promptly.
	sctx, scancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer scancel()
	require.NoError(t, s.srv.Shutdown(sctx), "handler left its Delay when the client went away")
	assert.Less(t, time.Since(start), 4*time.Second)
}

func TestTitleAnsweredWithoutScript(t *testing.T) {
	var calls atomic.Int32
	s := Start(t, func(Request) Reply { calls.Add(1); return Reply{Text: "script"} })
	resp := post(t, ctxT(t), s, `{"model":"mock-a","stream":true,"messages":[
	  {"role":"system","content":"You are a title generator. You output ONLY a thread title. Nothing else."},
	  {"role":"user","content":"Generate a title for this conversation:\n"}]}`)
	var text strings.Builder
	for _, c := range decodeChunks(t, frames(t, resp.Body)) {
		text.WriteString(c.Choices[0].Delta.Content)
	}
	assert.Equal(t, TitleText, text.String())
	assert.Zero(t, calls.Load())
	require.Len(t, s.Requests(), 1)
	assert.True(t, s.Requests()[0].Title)
	assert.Empty(t, s.Turns())
}

func TestNonStreaming(t *testing.T) {
	s := Start(t, func(Request) Reply {
		return Reply{Text: "plain", ToolCalls: []ToolCall{{Name: "bash", Args: map[string]any{"command": "pwd"}}}}
	})
	resp := post(t, ctxT(t), s, `{"model":"m","messages":[{"role":"user","content":"x"}]}`)
	require.Equal(t, 200, resp.StatusCode)
	var out struct {
		Object  string `json:"object"`
		Choices []struct {
			Message struct {
				Content   string `json:"content"`
				ToolCalls []struct {
					ID       string `json:"id"`
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	assert.Equal(t, "chat.completion", out.Object)
	require.Len(t, out.Choices, 1)
	assert.Equal(t, "plain", out.Choices[0].Message.Content)
	assert.Equal(t, "call_1", out.Choices[0].Message.ToolCalls[0].ID)
	assert.Equal(t, "tool_calls", out.Choices[0].FinishReason)
}

func TestScriptPanicAnswers500(t *testing.T) {
	s := Start(t, func(Request) Reply { panic("boom") })
	resp := post(t, ctxT(t), s, `{"model":"m","stream":true,"messages":[]}`)
	assert.Equal(t, 500, resp.StatusCode)
	b, _ := io.ReadAll(resp.Body)
	assert.True(t, bytes.Contains(b, []byte("boom")))
}

func TestSetScript(t *testing.T) {
	s := Start(t, Text("one"))
	s.SetScript(Text("two"))
	resp := post(t, ctxT(t), s, `{"model":"m","stream":true,"messages":[]}`)
	cs := decodeChunks(t, frames(t, resp.Body))
	assert.Equal(t, "two", cs[1].Choices[0].Delta.Content)
}

func TestWaitFor(t *testing.T) {
	s := Start(t, nil)
	ctx := ctxT(t)
	got := make(chan Request, 1)
	go func() {
		r, err := s.WaitFor(ctx, func(r Request) bool { return r.LastUser == "second" })
		if err == nil {
			got <- r
		}
	}()
	post(t, ctx, s, `{"model":"m","stream":true,"messages":[{"role":"user","content":"first"}]}`)
	post(t, ctx, s, `{"model":"m","stream":true,"messages":[{"role":"user","content":"second"}]}`)
	select {
	case r := <-got:
		assert.Equal(t, "second", r.LastUser)
	case <-ctx.Done():
		t.Fatal("WaitFor did not return")
	}
	// Already received requests match at once.
	r, err := s.WaitFor(ctx, func(r Request) bool { return r.LastUser == "first" })
	require.NoError(t, err)
	assert.Equal(t, "first", r.LastUser)

	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = s.WaitFor(short, func(r Request) bool { return false })
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}
