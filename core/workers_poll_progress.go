package core

import (
	"encoding/json"

	"github.com/asyncagents/asyncagents/core/ocevents"
)

// A polled task's progress (workers_poll.go). No stream brings its parts, so while its worker
// lists it busy its newest messages are read every polledProgressEveryMs (or pollMs, if longer)
// and handed to the machine as the stream would have handed them: each assistant message's
// message.updated, then its parts' message.part.updated. The same handlers then keep its
// progress, its partial work (what a cancel, a timeout or a lost worker leaves it), its tool
// calls, and its spending for the budgets. The read at its end feeds the whole conversation the
// same way, so its tool calls and steps are all counted even where the reads between missed one.
//
// A message is fed again at each read it is in; the handlers take a part or a message they saw
// before as the stream's repeated updates of one are taken (a step, a usage, a tool call counted
// once). A message from before the current attempt, or one aborted, is not fed: the stream told
// of it once, and its abort or its attempt's end was dealt with then.

// polledProgressEveryMs is how often a busy polled task's newest messages are read: the
// dashboard's and the TUI's rows are a few seconds behind, its partial work as much.
const polledProgressEveryMs = 5_000

// polledProgressMessages is how many of its newest messages each read takes: the step under way
// and the ones just before it.
const polledProgressMessages = 4

// readPolledProgress asks for t's newest messages when its last read is old enough.
func (m *Machine) readPolledProgress(t *run) {
	every := max(int64(polledProgressEveryMs), m.cfg.Workers[t.Worker].PollMs)
	if t.SessionID == "" || t.switching || m.now-t.polledReadAt < every || m.messagesAsked(t.ID) {
		return
	}
	t.polledReadAt = m.now
	m.request(Effect{Kind: EffectMessages, SessionID: t.SessionID, TaskID: t.ID, Limit: polledProgressMessages},
		pending{taskID: t.ID, progress: true, attemptAt: t.attemptAt})
}

// polledMessage is a message as OpenCode's GET /session/:id/message lists it, left undecoded.
type polledMessage struct {
	Info  json.RawMessage   `json:"info"`
	Parts []json.RawMessage `json:"parts"`
}

// feedPolled hands t's messages, read from its polled worker, to the machine as events.
func (m *Machine) feedPolled(t *run, raw json.RawMessage) {
	var msgs []polledMessage
	if json.Unmarshal(raw, &msgs) != nil {
		return
	}
	since := m.ocTime(t, t.attemptAt)
	for _, msg := range msgs {
		var info struct {
			Role  string          `json:"role"`
			Error *ocevents.Error `json:"error"`
			Time  struct {
				Created int64 `json:"created"`
			} `json:"time"`
		}
		if json.Unmarshal(msg.Info, &info) != nil || info.Role != "assistant" || info.Time.Created < since {
			continue
		}
		if info.Error != nil && info.Error.Name == ocevents.AbortedError {
			continue
		}
		m.onDecoded(ocevents.Decode("message.updated", wrapped("info", msg.Info)))
		for _, p := range msg.Parts {
			if t.Status.Terminal() || t.switching {
				return
			}
			m.onDecoded(ocevents.Decode("message.part.updated", wrapped("part", p)))
		}
		if t.Status.Terminal() || t.switching {
			return
		}
	}
}

// wrapped is {"key": raw}, an event's properties around one object.
func wrapped(key string, raw json.RawMessage) json.RawMessage {
	out := make([]byte, 0, len(raw)+len(key)+5)
	out = append(out, '{', '"')
	out = append(out, key...)
	out = append(out, '"', ':')
	out = append(out, raw...)
	return append(out, '}')
}
