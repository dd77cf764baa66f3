package core

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
)

// stepStream is one step of a remote child as its worker streams it (the events the core reads):
// its status, the assistant message and its parts (a text of about 2.6 KB, a tool going pending,
// running and completed, the step's end), the message's usage as it grows.
func stepStream(session string, step int) []OpenCodeEvent {
	ev := func(typ, props string) OpenCodeEvent {
		return OpenCodeEvent{Type: typ, Properties: json.RawMessage(props)}
	}
	msg := fmt.Sprintf("msg_%s_%d", session, step)
	text, _ := json.Marshal(strings.Repeat("The child's findings, streamed token by token as a model would. ", 40))
	part := func(id, body string) OpenCodeEvent {
		return ev("message.part.updated", fmt.Sprintf(`{"part":{"id":"prt_%s_%d_%s","sessionID":%q,"messageID":%q,%s}}`, session, step, id, session, msg, body))
	}
	info := func(output int, finish string) OpenCodeEvent {
		return ev("message.updated", fmt.Sprintf(`{"info":{"id":%q,"sessionID":%q,"role":"assistant","parentID":"msg_u","modelID":"mock-a","providerID":"mock","mode":"general","agent":"general","path":{"cwd":"/srv/w1/repo","root":"/srv/w1/repo"},"finish":%q,"tokens":{"input":1200,"output":%d,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0,"time":{"created":5,"completed":9}}}`, msg, session, finish, output))
	}
	tool := func(status string) OpenCodeEvent {
		return part("tool", fmt.Sprintf(`"type":"tool","tool":"read","callID":"call_%d","state":{"status":%q,"input":{"filePath":"opencode.json"},"output":"{\n  \"model\": \"mock/mock-a\"\n}","title":"opencode.json","metadata":{"preview":"{"},"time":{"start":1,"end":2}}`, step, status))
	}
	return []OpenCodeEvent{
		ev("session.status", fmt.Sprintf(`{"sessionID":%q,"status":{"type":"busy"}}`, session)),
		info(0, ""),
		part("start", `"type":"step-start","snapshot":"8b985b8bdf3a4a8f89472ffb81bf238138cddd55"`),
		part("text", `"type":"text","text":""`),
		part("text", fmt.Sprintf(`"type":"text","text":%s,"time":{"start":3,"end":4}`, text)),
		tool("pending"), tool("running"), tool("completed"),
		part("finish", `"type":"step-finish","reason":"tool-calls","snapshot":"8b985b8bdf3a4a8f89472ffb81bf238138cddd55","cost":0,"tokens":{"input":1200,"output":300,"reasoning":0,"cache":{"read":0,"write":0}}`),
		info(300, "tool-calls"),
	}
}

// BenchmarkRemoteChildStep is what one step of 20 remote children costs the core, their events
// fed one by one or grouped as the follow rule groups them (a step's events in one batch).
func BenchmarkRemoteChildStep(b *testing.B) {
	for _, grouped := range []bool{false, true} {
		b.Run(fmt.Sprintf("grouped=%v", grouped), func(b *testing.B) {
			h := newWK(&testing.T{}, twoWorkers(func(c *config.Config) {
				c.MaxConcurrentStarts = 20
				for name, w := range c.Workers {
					w.MaxTasks = 10
					c.Workers[name] = w
				}
			}))
			h.state("w1", true, "")
			h.state("w2", true, "")
			var tasks []*run
			for i := range 20 {
				r, _ := h.launchOn(fmt.Sprintf("t%d", i), []string{"w1", "w2"}[i%2])
				tasks = append(tasks, h.taskOf(r))
			}
			const steps = 8 // built before the clock starts; later rounds update the same parts
			streams := map[string][][]OpenCodeEvent{}
			for _, tk := range tasks {
				for s := range steps {
					streams[tk.ID] = append(streams[tk.ID], stepStream(tk.SessionID, s))
				}
			}
			events := 0
			b.ResetTimer()
			for n := 0; n < b.N; n++ {
				for _, tk := range tasks {
					stream := streams[tk.ID][n%steps]
					events += len(stream)
					if grouped {
						h.m.Step(h.now, Event{Type: EventOpenCode, Worker: tk.Worker, Events: stream})
						continue
					}
					for i := range stream {
						h.m.Step(h.now, Event{Type: EventOpenCode, Worker: tk.Worker, Event: &stream[i]})
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(events), "us/event")
		})
	}
}
