package ocevents

import (
	"strings"
	"testing"
)

// BenchmarkDecode compares the hand decoders with encoding/json on the hot events' real shapes
// (a text part of 2.6 KB, a completed tool, an assistant message, a status).
func BenchmarkDecode(b *testing.B) {
	text := strings.Repeat("The child's findings, streamed token by token as a model would. ", 40)
	names := []string{"text part", "tool part", "message", "status"}
	events := []decodeCase{
		{"message.part.updated", `{"part":{"id":"prt_2","sessionID":"ses_c1","messageID":"msg_1","type":"text","text":"` + text + `","time":{"start":3,"end":4}}}`},
		realCases[14], realCases[8], realCases[0],
	}
	for i, e := range events {
		props := []byte(e.props)
		for _, d := range []struct {
			name   string
			decode func(string, []byte) any
		}{{"hand", func(t string, p []byte) any { return Decode(t, p) }}, {"encoding-json", func(t string, p []byte) any { return decodeStd(t, p) }}} {
			b.Run(names[i]+"/"+d.name, func(b *testing.B) {
				b.SetBytes(int64(len(props)))
				b.ReportAllocs()
				for b.Loop() {
					if d.decode(e.typ, props) == nil {
						b.Fatal("nil")
					}
				}
			})
		}
	}
}
