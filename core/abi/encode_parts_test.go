package abi

import (
	"encoding/json"
	"testing"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/httpapi"
	"github.com/asyncagents/asyncagents/core/internal/encodetest"
	"github.com/stretchr/testify/require"
)

// An effect writes what encoding/json writes for its struct: with every field set, each field
// alone, and each awkward string in each string field.
func TestEffectEncodesAsTheStruct(t *testing.T) {
	all := core.Effect{ID: 7, Kind: core.EffectSummarize, Reply: true, SessionID: "ses_1", Directory: "/w/bg_1", Worker: "w1", Remote: &core.Remote{URL: "https://w1:4096", Username: "u", PasswordEnv: "W1_PW", Insecure: true}, Follow: &core.FollowRule{BatchMs: 250, Defer: []string{"a", "b"}, Coalesce: map[string]string{"b": "x.id", "a": "id"}}, TaskID: "bg_1", Limit: 4, Notice: true, TaskIDs: []string{"bg_1", "bg_2"}, ParentID: "ses_0", Title: "t <1>",
		Permission: []core.PermissionRule{{Permission: "task", Pattern: "*", Action: "deny"}}, Agent: "build",
		Parts: []core.TextPart{{Type: "text", Text: "go", Synthetic: true}}, Tools: map[string]bool{"b": true, "a": false}, NoReply: true,
		Model: "p/m", ProviderID: "p", ModelID: "m", CallID: "call_1", Output: "out", Error: "err", Metadata: map[string]any{"title": "x", "n": 1.5},
		TimerID: "timer", DelayMs: -5, Level: "info", Message: "msg", Variant: "success", Line: "line\n", Content: "content", File: "f.json", RequestID: "per_1", Answer: "once", Path: "/w/bg_1", Branch: "asyncagents/bg_1", Base: "abc", Commit: "def", MaxBytes: 9, Frame: "data: {}\n\n"}
	cases := encodetest.FieldVariants(t, all)
	for _, e := range cases {
		want, err := json.Marshal(e)
		require.NoError(t, err)
		got, err := appendEffect(nil, &e)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got))
	}
	want, _ := json.Marshal(cases)
	got, err := appendEffects(nil, cases)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))
}

// An effect whose metadata cannot be encoded is an error, as with encoding/json.
func TestAnEffectThatCannotBeEncodedIsAnError(t *testing.T) {
	e := core.Effect{Kind: core.EffectToolReply, Metadata: map[string]any{"f": func() {}}}
	_, want := json.Marshal(e)
	require.Error(t, want)
	_, err := appendEffects(nil, []core.Effect{e})
	require.Error(t, err)
	out := encode(Response{OK: true, Effects: []core.Effect{e}})
	require.Contains(t, string(out), "encoding the response failed")
}

// An HTTP answer writes what encoding/json writes: headers sorted, none, or empty; a stream; a
// logs answer; awkward strings anywhere.
func TestHTTPResponseEncodesAsTheStruct(t *testing.T) {
	// The headers the status API sends: an answer's, and a preflight's.
	ask := func(method string) map[string]string {
		req := httpapi.Request{Method: method, Path: "/v1/health", Headers: map[string]string{"host": "127.0.0.1"}}
		return httpapi.ServeTasks(req, nil, config.APIConfig{}, 0).Headers
	}
	cases := []httpapi.Response{{}, {Status: 204}, {Status: 200, Headers: map[string]string{}},
		{Status: 200, Headers: ask("GET"), Body: `{"tasks":[]}`},
		{Status: 200, Headers: map[string]string{"b": "2", "a": "1", "C": "3"}, Stream: true, Body: "event: snapshot\n\n"},
		{Status: 200, Headers: ask("OPTIONS"), Logs: "ses_1"},
		{Status: 200, Logs: "ses_1", Worker: "w1", Remote: &httpapi.Remote{URL: "http://127.0.0.1:1", Username: "u", PasswordEnv: "P"}, Directory: "/r"},
		{Status: 200, Messages: "ses_1", Worker: "w1", Remote: &httpapi.Remote{URL: "u", Insecure: true}}}
	for _, s := range encodetest.AwkwardStrings {
		cases = append(cases, httpapi.Response{Status: 400, Headers: map[string]string{s: s}, Body: s, Logs: s, Worker: s, Directory: s,
			Remote: &httpapi.Remote{URL: s, Username: s, PasswordEnv: s}})
	}
	for _, r := range cases {
		want, err := json.Marshal(r)
		require.NoError(t, err)
		require.Equal(t, string(want), string(appendHTTPResponse(nil, &r)))
	}
}

// Any strings and numbers in an effect and an HTTP answer encode as encoding/json encodes them.
func FuzzEnvelopeEncodersMatchEncodingJSON(f *testing.F) {
	for _, s := range encodetest.AwkwardStrings {
		f.Add(s, s, int64(-1), true)
	}
	f.Fuzz(func(t *testing.T, a, b string, n int64, flag bool) {
		e := core.Effect{ID: n, Kind: a, Reply: flag, SessionID: b, Message: a, Line: b, DelayMs: n}
		want, err := json.Marshal(e)
		require.NoError(t, err)
		got, err := appendEffect(nil, &e)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got))

		r := httpapi.Response{Status: int(n % 1000), Headers: map[string]string{a: b, b: a}, Body: a, Stream: flag, Logs: b}
		want, err = json.Marshal(r)
		require.NoError(t, err)
		require.Equal(t, string(want), string(appendHTTPResponse(nil, &r)))
	})
}
