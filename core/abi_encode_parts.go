package core

import (
	"slices"
	"strconv"
)

// The effects and the HTTP answer of a response, written field by field as encoding/json would
// write their structs. They are in nearly every answer, and the first answers after a start are
// on the path to the API's first listing: encoding/json built their encoders (reflection over
// every field, then the map and slice encoders) at their first use, 4 to 14 ms of the first
// step and of the first HTTP answer inside WebAssembly in Bun. TestEffectEncodesAsTheStruct and
// TestHTTPResponseEncodesAsTheStruct hold these to the structs' own encoding.

// appendEffects writes effects as a JSON array.
func appendEffects(b []byte, effects []Effect) ([]byte, error) {
	b = append(b, '[')
	for i := range effects {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendEffect(b, &effects[i]); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

// appendEffect writes one effect: its keys in the struct's order, omitempty as the tags say.
func appendEffect(b []byte, e *Effect) ([]byte, error) {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, e.ID, 10)
	b = appendKeyString(b, "kind", e.Kind)
	if e.Reply {
		b = append(b, `,"reply":true`...)
	}
	b = appendOptString(b, "sessionID", e.SessionID)
	b = appendOptString(b, "taskID", e.TaskID)
	if e.Notice {
		b = append(b, `,"notice":true`...)
	}
	b = appendOptString(b, "parentID", e.ParentID)
	b = appendOptString(b, "title", e.Title)
	var err error
	if len(e.Permission) > 0 {
		b, err = appendKeyValue(b, "permission", e.Permission)
	}
	b = appendOptString(b, "agent", e.Agent)
	if err == nil && len(e.Parts) > 0 {
		b, err = appendKeyValue(b, "parts", e.Parts)
	}
	if err == nil && len(e.Tools) > 0 {
		b, err = appendKeyValue(b, "tools", e.Tools)
	}
	if err != nil {
		return nil, err
	}
	if e.NoReply {
		b = append(b, `,"noReply":true`...)
	}
	b = appendOptString(b, "model", e.Model)
	b = appendOptString(b, "callID", e.CallID)
	b = appendOptString(b, "output", e.Output)
	b = appendOptString(b, "error", e.Error)
	if len(e.Metadata) > 0 {
		if b, err = appendKeyValue(b, "metadata", e.Metadata); err != nil {
			return nil, err
		}
	}
	b = appendOptString(b, "timerID", e.TimerID)
	b = appendOptInt(b, "delayMs", e.DelayMs)
	b = appendOptString(b, "level", e.Level)
	b = appendOptString(b, "message", e.Message)
	b = appendOptString(b, "line", e.Line)
	b = appendOptString(b, "content", e.Content)
	b = appendOptString(b, "file", e.File)
	b = appendOptString(b, "frame", e.Frame)
	return append(b, '}'), nil
}

// appendHTTPResponse writes an HTTP answer: its headers in sorted order, as encoding/json
// writes a map.
func appendHTTPResponse(b []byte, r *HTTPResponse) []byte {
	b = append(b, `{"status":`...)
	b = strconv.AppendInt(b, int64(r.Status), 10)
	b = append(b, `,"headers":`...)
	if r.Headers == nil {
		b = append(b, "null"...)
	} else {
		keys := make([]string, 0, len(r.Headers))
		for k := range r.Headers {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendJSONString(b, r.Headers[k])
		}
		b = append(b, '}')
	}
	b = appendKeyString(b, "body", r.Body)
	if r.Stream {
		b = append(b, `,"stream":true`...)
	}
	b = appendOptString(b, "logs", r.Logs)
	return append(appendOptString(b, "asset", r.Asset), '}')
}
