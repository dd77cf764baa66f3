package ocevents

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/internal/jsonr"
	"github.com/stretchr/testify/require"
)

// realMessages is a child's conversation as GET /session/:id/message answers it: its prompt, a
// step that read a file, a step that ran a shell, and its answer (the infos and parts of
// realCases, in their real order of keys).
func realMessages() string {
	var infos, parts []string
	for _, c := range realCases {
		var ev map[string]json.RawMessage
		if json.Unmarshal([]byte(c.props), &ev) != nil {
			continue
		}
		switch c.typ {
		case "message.updated":
			infos = append(infos, string(ev["info"]))
		case "message.part.updated":
			parts = append(parts, string(ev["part"]))
		}
	}
	var msgs []string
	for i, info := range infos {
		msgs = append(msgs, `{"info":`+info+`,"parts":[`+strings.Join(parts[i%len(parts):], ",")+`]}`)
	}
	return "[" + strings.Join(msgs, ",") + "]"
}

// messagesEdgeCases are what encoding/json decides in its own way: DecodeMessages must give the
// same, result and error.
var messagesEdgeCases = []string{
	``, `null`, `[]`, `{}`, `[null]`, `[{}]`, `[{"info":null,"parts":null}]`, `[{"parts":[]}]`, `[{"parts":[null,{}]}]`,
	`[{"parts":[{"id":"a"}],"parts":[{"text":"b"}]}]`, // a second parts merges into the first
	`[{"info":{"id":"a"},"info":{"role":"user"}}]`,
	`[{"info":{"tokens":{"input":1},"tokens":{"output":2}}}]`,
	`[{"info":{"tokens":null,"error":null,"summary":null}}]`,
	`[{"info":{"summary":{"title":"t","diffs":[]}}}]`,
	`[{"Info":{"ID":"a"}}]`, `[{"PARTS":[{"Text":"x"}]}]`, // keys that match only case-insensitively
	`[{"info":{"cost":"1"}}]`, `[{"info":{"time":{"created":1.5}}}]`, `[{"parts":[{"synthetic":"yes"}]}]`,
	`[{"parts":{}}]`, `[1]`, `["x"]`, `[{"info":{"id":"a"}}`, `[{"info":{"id":"a"}}] x`,
	`[{"parts":[{"text":"\ud83d\ude00 \u00e9 \"q\" \\"}]}]`, "[{\"parts\":[{\"text\":\"\xff\"}]}]",
	`[{"parts":[{"state":{"status":"running","input":{"a":[1,{"b":null}]},"title":null}}]}]`,
	// A tool's metadata, whatever it holds, never fails the read; only a string sessionId counts.
	`[{"parts":[{"tool":"task","state":{"metadata":{"parentSessionId":"ses_c","sessionId":"ses_s","model":{"modelID":"m"}}}}]}]`,
	`[{"parts":[{"state":{"metadata":null}},{"state":{"metadata":5}},{"state":{"metadata":"x"}},{"state":{"metadata":[1]}}]}]`,
	`[{"parts":[{"state":{"metadata":{"sessionId":5}}},{"state":{"metadata":{"sessionId":null}}}]}]`,
	`[{"parts":[{"state":{"metadata":{"sessionId":"a","sessionId":"b"},"metadata":{"output":"x"}}}]}]`,
	`[{"parts":[{"state":{"Metadata":{"sessionId":"a"}}}]}]`, `[{"parts":[{"state":{"metadata":{"SessionId":"a"}}}]}]`,
	`[{"parts":[{"state":{"metadata":{"sessionId":"ses_\u00e9"}}}]}]`, `[{"parts":[{"state":{"metadata":{"sessionId":"a"}`,
}

// Every case decodes to what encoding/json alone gives, result and error.
func TestDecodeMessagesMatchesEncodingJSON(t *testing.T) {
	for _, c := range append([]string{realMessages()}, messagesEdgeCases...) {
		requireSameMessages(t, []byte(c))
	}
	deep := `[{"parts":[{"state":{"input":` + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + `}}]}]`
	requireSameMessages(t, []byte(deep))
}

// The hand reader reads a real conversation itself: a change that sends it to encoding/json
// every time (a key mistyped) fails here, not only in a benchmark.
func TestDecodeMessagesReadsARealConversationByHand(t *testing.T) {
	var msgs []Message
	r := jsonr.New([]byte(realMessages()))
	readMessages(&r, &msgs)
	require.Equal(t, jsonr.OK, r.End())
	require.NotEmpty(t, msgs)
	require.NotEmpty(t, msgs[0].Parts)
	var sub string
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Tool == "task" {
				sub = p.State.Metadata.SessionID
			}
		}
	}
	require.Equal(t, "ses_de3f0c310ffeiy4No3YR6I5mR6", sub, "the task tool's subagent session, from its metadata")
}

// FuzzDecodeMessagesMatchesEncodingJSON: for any bytes, DecodeMessages gives what encoding/json
// gives.
func FuzzDecodeMessagesMatchesEncodingJSON(f *testing.F) {
	for _, c := range append([]string{realMessages()}, messagesEdgeCases...) {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { requireSameMessages(t, raw) })
}

func requireSameMessages(t *testing.T, raw []byte) {
	t.Helper()
	var want []Message
	wantErr := json.Unmarshal(raw, &want)
	got, err := DecodeMessages(raw)
	require.Equal(t, wantErr, err, "%s", raw)
	require.True(t, reflect.DeepEqual(got, want), "%s:\n got %#v\nwant %#v", raw, got, want)
}

// BenchmarkDecodeMessages compares the hand reader with encoding/json on a real conversation.
func BenchmarkDecodeMessages(b *testing.B) {
	raw := []byte(realMessages())
	for _, d := range []struct {
		name   string
		decode func([]byte) error
	}{
		{"hand", func(raw []byte) error { _, err := DecodeMessages(raw); return err }},
		{"encoding-json", func(raw []byte) error { var m []Message; return json.Unmarshal(raw, &m) }},
	} {
		b.Run(d.name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				if d.decode(raw) != nil {
					b.Fatal("error")
				}
			}
		})
	}
}
