package ocevents

import (
	"encoding/json"

	"github.com/asyncagents/asyncagents/core/internal/jsonr"
)

// DecodeMessages reads a session's messages as GET /session/:id/message answers them. A child's
// end, and a polled task's progress every few seconds, read its conversation this way: tool
// calls with their inputs and outputs, most of which the core skips. The hand reader skips them
// without reflection; what it cannot judge, and any input it finds wrong, goes to encoding/json,
// so the result and the error are always encoding/json's (FuzzDecodeMessagesMatchesEncodingJSON).
func DecodeMessages(raw []byte) ([]Message, error) {
	var msgs []Message
	r := jsonr.New(raw)
	readMessages(&r, &msgs)
	if r.End() == jsonr.OK {
		return msgs, nil
	}
	msgs = nil
	err := json.Unmarshal(raw, &msgs)
	return msgs, err
}

// The fields of a message, for jsonr.Reader.Unknown (Info's Usage is embedded: its fields are
// the info's own).
var (
	messageOuterKeys = []string{"info", "parts"}
	messagePartKeys  = []string{"type", "text", "synthetic", "ignored", "id", "callID", "tool", "reason", "state"}
	messageStateKeys = []string{"status", "title", "metadata"}
)

// PartMetadata is what the core reads of a tool part's metadata: the session OpenCode's task tool
// runs its subagent in (a polled task's subagents are found by it, core/workers_poll_subagents.go).
// Metadata is each tool's own, so any value reads without an error (one would cost the whole
// read of the messages): what is not an object holding a string sessionId reads as none.
type PartMetadata struct {
	SessionID string
}

// UnmarshalJSON reads b, whatever it holds (encoding/json and the hand reader both call it).
func (p *PartMetadata) UnmarshalJSON(b []byte) error {
	*p = PartMetadata{}
	r := jsonr.New(b)
	if r.Null() || !r.Object() {
		return nil
	}
	for n := 0; r.Field(n); n++ {
		if string(r.Key()) != "sessionId" {
			r.Skip()
			continue
		}
		var id string
		if r.String(&id); r.State() == jsonr.OK {
			p.SessionID = id
		}
		return nil
	}
	return nil
}

func readMessages(r *jsonr.Reader, msgs *[]Message) {
	if r.Null() || !r.Array() {
		return
	}
	*msgs = []Message{}
	for n := 0; r.Element(n); n++ {
		*msgs = append(*msgs, Message{})
		readMessage(r, &(*msgs)[len(*msgs)-1])
	}
}

func readMessage(r *jsonr.Reader, m *Message) {
	if !r.Object() {
		return
	}
	for n := 0; r.Field(n); n++ {
		switch string(r.Key()) {
		case "info":
			readMessageInfo(r, &m.Info)
		case "parts":
			readMessageParts(r, m)
		default:
			r.Unknown(messageOuterKeys)
		}
	}
}

// readMessageParts reads a message's parts. A second "parts" key is left to encoding/json,
// which decodes it into the parts already read.
func readMessageParts(r *jsonr.Reader, m *Message) {
	if m.Parts != nil {
		r.Fail(jsonr.Unsure)
		return
	}
	if r.Null() || !r.Array() {
		return
	}
	m.Parts = []MessagePart{}
	for n := 0; r.Element(n); n++ {
		m.Parts = append(m.Parts, MessagePart{})
		readMessagePart(r, &m.Parts[len(m.Parts)-1])
	}
}

func readMessagePart(r *jsonr.Reader, p *MessagePart) {
	if !r.Object() {
		return
	}
	for n := 0; r.Field(n); n++ {
		switch string(r.Key()) {
		case "type":
			r.String(&p.Type)
		case "text":
			r.String(&p.Text)
		case "synthetic":
			r.Bool(&p.Synthetic)
		case "ignored":
			r.Bool(&p.Ignored)
		case "id":
			r.String(&p.ID)
		case "callID":
			r.String(&p.CallID)
		case "tool":
			r.String(&p.Tool)
		case "reason":
			r.String(&p.Reason)
		case "state":
			if r.Object() {
				for n := 0; r.Field(n); n++ {
					switch string(r.Key()) {
					case "status":
						r.String(&p.State.Status)
					case "title":
						r.String(&p.State.Title)
					case "metadata":
						if raw := r.Raw(); raw != nil {
							_ = p.State.Metadata.UnmarshalJSON(raw)
						}
					default:
						r.Unknown(messageStateKeys)
					}
				}
			}
		default:
			r.Unknown(messagePartKeys)
		}
	}
}
