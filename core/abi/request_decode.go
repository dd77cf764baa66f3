package abi

import (
	"encoding/json"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/internal/jsonr"
)

// decodeRequest reads a request envelope. A step's (op, now and its event, nothing else: what
// every host sends for a step) is read by hand, its OpenCode events' properties left in req
// where they are; anything else, and any input the hand reader cannot judge or finds wrong, goes
// to encoding/json, whose error message names the fault. Both give the same Request
// (FuzzDecodeRequestMatchesEncodingJSON).
//
// The properties stay slices of req: req lives for the call, and the step only decodes them
// (ocevents.Decode copies what it keeps); no OpenCodeEvent outlives the step.
func decodeRequest(req []byte) (Request, error) {
	if q, ok := readStepRequest(req); ok {
		return q, nil
	}
	var q Request
	err := json.Unmarshal(req, &q)
	return q, err
}

var (
	eventKeys = []string{"type", "callID", "tool", "sessionID", "messageID", "agent", "args", "effectID", "ok",
		"result", "error", "event", "events", "worker", "up", "timerID", "open"}
	openCodeEventKeys = []string{"type", "properties"}
)

func readStepRequest(req []byte) (Request, bool) {
	var q Request
	r := jsonr.New(req)
	if r.Object() {
		for n := 0; r.Field(n); n++ {
			switch string(r.Key()) {
			case "op":
				r.String(&q.Op)
			case "now":
				r.Int(&q.Now)
			case "event":
				if r.Null() {
					q.Event = nil
					continue
				}
				if q.Event == nil {
					q.Event = &core.Event{}
				}
				readEvent(&r, q.Event)
			default:
				r.Fail(jsonr.Unsure) // another op's field
			}
		}
	}
	return q, r.End() == jsonr.OK
}

func readEvent(r *jsonr.Reader, e *core.Event) {
	if !r.Object() {
		return
	}
	for n := 0; r.Field(n); n++ {
		switch string(r.Key()) {
		case "type":
			r.String(&e.Type)
		case "callID":
			r.String(&e.CallID)
		case "tool":
			r.String(&e.Tool)
		case "sessionID":
			r.String(&e.SessionID)
		case "messageID":
			r.String(&e.MessageID)
		case "agent":
			r.String(&e.Agent)
		case "args":
			// Copied, as encoding/json copies: a tool call's arguments may be kept.
			if raw := r.Raw(); raw != nil {
				e.Args = append(e.Args[:0:0], raw...)
			}
		case "effectID":
			r.Int(&e.EffectID)
		case "ok":
			r.Bool(&e.OK)
		case "result":
			if raw := r.Raw(); raw != nil {
				e.Result = append(e.Result[:0:0], raw...)
			}
		case "error":
			r.String(&e.Error)
		case "event":
			if r.Null() {
				e.Event = nil
				continue
			}
			if e.Event == nil {
				e.Event = &core.OpenCodeEvent{}
			}
			readOpenCodeEvent(r, e.Event)
		case "events":
			readOpenCodeEvents(r, e)
		case "worker":
			r.String(&e.Worker)
		case "up":
			r.Bool(&e.Up)
		case "timerID":
			r.String(&e.TimerID)
		case "open":
			r.IntN(&e.Open)
		default:
			r.Unknown(eventKeys)
		}
	}
}

// readOpenCodeEvents reads events into a fresh slice (null: none). A second events key, which
// encoding/json decodes into the first one's elements, is left to it.
func readOpenCodeEvents(r *jsonr.Reader, e *core.Event) {
	if e.Events != nil {
		r.Fail(jsonr.Unsure)
		return
	}
	if r.Null() {
		return
	}
	if !r.Array() {
		return
	}
	e.Events = []core.OpenCodeEvent{}
	for n := 0; r.Element(n); n++ {
		e.Events = append(e.Events, core.OpenCodeEvent{})
		readOpenCodeEvent(r, &e.Events[len(e.Events)-1])
	}
}

func readOpenCodeEvent(r *jsonr.Reader, o *core.OpenCodeEvent) {
	if !r.Object() {
		return
	}
	for n := 0; r.Field(n); n++ {
		switch string(r.Key()) {
		case "type":
			r.String(&o.Type)
		case "properties":
			o.Properties = r.Raw() // a slice of the request: see decodeRequest
		default:
			r.Unknown(openCodeEventKeys)
		}
	}
}
