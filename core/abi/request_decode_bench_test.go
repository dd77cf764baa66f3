package abi

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkDecodeRequest compares the hand reader with encoding/json on a step's envelope as a
// worker's batch brings it: one step of a remote child, ten events (a 2.6 KB text part among
// them).
func BenchmarkDecodeRequest(b *testing.B) {
	text, _ := json.Marshal(strings.Repeat("The child's findings, streamed token by token as a model would. ", 40))
	part := func(id, body string) string {
		return fmt.Sprintf(`{"type":"message.part.updated","properties":{"part":{"id":"prt_%s","sessionID":"ses_c1","messageID":"msg_1",%s}}}`, id, body)
	}
	info := `{"type":"message.updated","properties":{"info":{"id":"msg_1","sessionID":"ses_c1","role":"assistant","parentID":"msg_u","modelID":"mock-a","providerID":"mock","mode":"general","agent":"general","path":{"cwd":"/srv/w1/repo","root":"/srv/w1/repo"},"tokens":{"input":1200,"output":300,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0,"time":{"created":5,"completed":9}}}}`
	tool := part("tool", `"type":"tool","tool":"read","callID":"call_1","state":{"status":"completed","input":{"filePath":"opencode.json"},"output":"{\n  \"model\": \"mock/mock-a\"\n}","title":"opencode.json","metadata":{"preview":"{"},"time":{"start":1,"end":2}}`)
	events := []string{`{"type":"session.status","properties":{"sessionID":"ses_c1","status":{"type":"busy"}}}`, info,
		part("start", `"type":"step-start","snapshot":"8b985b8bdf3a4a8f89472ffb81bf238138cddd55"`), part("text", `"type":"text","text":""`),
		part("text", `"type":"text","text":`+string(text)+`,"time":{"start":3,"end":4}`), tool, tool, tool,
		part("finish", `"type":"step-finish","reason":"tool-calls","cost":0,"tokens":{"input":1200,"output":300,"reasoning":0,"cache":{"read":0,"write":0}}`), info}
	req := []byte(`{"op":"step","now":1764200000123,"event":{"type":"opencode","worker":"w1","events":[` + strings.Join(events, ",") + `]}}`)
	if _, ok := readStepRequest(req); !ok {
		b.Fatal("the hand reader left the request to encoding/json")
	}
	for _, d := range []struct {
		name   string
		decode func([]byte) (Request, error)
	}{{"hand", decodeRequest}, {"encoding-json", func(r []byte) (q Request, err error) { return q, json.Unmarshal(r, &q) }}} {
		b.Run(d.name, func(b *testing.B) {
			b.SetBytes(int64(len(req)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := d.decode(req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
