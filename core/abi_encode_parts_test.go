package core

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

// fieldVariants returns the zero value, all (whose exported fields must all be set: a field
// added to the struct and not to the test fails here), each exported field of all alone, and all
// with each awkward string in each string field.
func fieldVariants[T any](t *testing.T, all T) []T {
	t.Helper()
	v := reflect.ValueOf(all)
	var zero T
	out := []T{zero, all}
	for i := range v.NumField() {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		require.False(t, v.Field(i).IsZero(), "set %s in this test's all", v.Type().Field(i).Name)
		var alone T
		reflect.ValueOf(&alone).Elem().Field(i).Set(v.Field(i))
		out = append(out, alone)
		if v.Field(i).Kind() == reflect.String {
			for _, s := range awkwardStrings {
				c := all
				reflect.ValueOf(&c).Elem().Field(i).SetString(s)
				out = append(out, c)
			}
		}
	}
	return out
}

// awkwardStrings are the strings whose JSON encoding has something to escape, each kind once.
var awkwardStrings = []string{"", "plain", `say "hi"`, `back\slash`, "line\nbreak\ttab\r\b\f\x01", "<b>&amp;</b>", "résumé ✓", "\u2028\u2029", "bad \xff utf-8"}

// An effect writes what encoding/json writes for its struct: with every field set, each field
// alone, and each awkward string in each string field.
func TestEffectEncodesAsTheStruct(t *testing.T) {
	all := Effect{ID: 7, Kind: EffectSummarize, Reply: true, SessionID: "ses_1", TaskID: "bg_1", Notice: true, ParentID: "ses_0", Title: "t <1>",
		Permission: []PermissionRule{{Permission: "task", Pattern: "*", Action: "deny"}}, Agent: "build",
		Parts: []TextPart{{Type: "text", Text: "go", Synthetic: true}}, Tools: map[string]bool{"b": true, "a": false}, NoReply: true,
		Model: "p/m", CallID: "call_1", Output: "out", Error: "err", Metadata: map[string]any{"title": "x", "n": 1.5},
		TimerID: "timer", DelayMs: -5, Level: "info", Message: "msg", Line: "line\n", Content: "content", File: "f.json", Frame: "data: {}\n\n"}
	cases := fieldVariants(t, all)
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
	e := Effect{Kind: EffectToolReply, Metadata: map[string]any{"f": func() {}}}
	_, want := json.Marshal(e)
	require.Error(t, want)
	_, err := appendEffects(nil, []Effect{e})
	require.Error(t, err)
	out := encode(Response{OK: true, Effects: []Effect{e}})
	require.Contains(t, string(out), "encoding the response failed")
}

// An HTTP answer writes what encoding/json writes: headers sorted, none, or empty; a stream; a
// logs answer; awkward strings anywhere.
func TestHTTPResponseEncodesAsTheStruct(t *testing.T) {
	cases := []HTTPResponse{{}, {Status: 204}, {Status: 200, Headers: map[string]string{}},
		{Status: 200, Headers: apiJSONHeaders(), Body: `{"tasks":[]}`},
		{Status: 200, Headers: map[string]string{"b": "2", "a": "1", "C": "3"}, Stream: true, Body: "event: snapshot\n\n"},
		{Status: 200, Headers: apiBaseHeaders(), Logs: "ses_1"}}
	for _, s := range awkwardStrings {
		cases = append(cases, HTTPResponse{Status: 400, Headers: map[string]string{s: s}, Body: s, Logs: s})
	}
	for _, r := range cases {
		want, err := json.Marshal(r)
		require.NoError(t, err)
		require.Equal(t, string(want), string(appendHTTPResponse(nil, &r)))
	}
}
