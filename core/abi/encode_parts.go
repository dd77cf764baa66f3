package abi

import (
	"slices"
	"strconv"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/httpapi"
	"github.com/asyncagents/asyncagents/core/internal/jsonw"
)

// The effects and the HTTP answer of a response, written field by field as encoding/json would
// write their structs. They are in nearly every answer, and the first answers after a start are
// on the path to the API's first listing: encoding/json builds their encoders (reflection over
// every field, then the map and slice encoders) at their first use, which inside WebAssembly
// delays the first step and the first HTTP answer after a start. TestEffectEncodesAsTheStruct and
// TestHTTPResponseEncodesAsTheStruct hold these to the structs' own encoding.

// appendEffects writes effects as a JSON array.
func appendEffects(b []byte, effects []core.Effect) ([]byte, error) {
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
func appendEffect(b []byte, e *core.Effect) ([]byte, error) {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, e.ID, 10)
	b = jsonw.KeyString(b, "kind", e.Kind)
	if e.Reply {
		b = append(b, `,"reply":true`...)
	}
	b = jsonw.OptString(b, "sessionID", e.SessionID)
	b = jsonw.OptString(b, "directory", e.Directory)
	b = jsonw.OptString(b, "worker", e.Worker)
	var err error
	if e.Remote != nil {
		b, err = jsonw.KeyValue(b, "remote", e.Remote)
	}
	if err == nil && e.Follow != nil {
		b, err = jsonw.KeyValue(b, "follow", e.Follow)
	}
	b = jsonw.OptString(b, "taskID", e.TaskID)
	b = jsonw.OptInt(b, "limit", int64(e.Limit))
	if e.Notice {
		b = append(b, `,"notice":true`...)
	}
	if len(e.TaskIDs) > 0 {
		b = append(b, `,"taskIDs":`...)
		b = jsonw.Strings(b, e.TaskIDs)
	}
	b = jsonw.OptString(b, "parentID", e.ParentID)
	b = jsonw.OptString(b, "title", e.Title)
	if err == nil && len(e.Permission) > 0 {
		b, err = jsonw.KeyValue(b, "permission", e.Permission)
	}
	b = jsonw.OptString(b, "agent", e.Agent)
	if err == nil && len(e.Parts) > 0 {
		b, err = jsonw.KeyValue(b, "parts", e.Parts)
	}
	if err == nil && len(e.Tools) > 0 {
		b, err = jsonw.KeyValue(b, "tools", e.Tools)
	}
	if err != nil {
		return nil, err
	}
	if e.NoReply {
		b = append(b, `,"noReply":true`...)
	}
	b = jsonw.OptString(b, "model", e.Model)
	b = jsonw.OptString(b, "providerID", e.ProviderID)
	b = jsonw.OptString(b, "modelID", e.ModelID)
	b = jsonw.OptString(b, "callID", e.CallID)
	b = jsonw.OptString(b, "output", e.Output)
	b = jsonw.OptString(b, "error", e.Error)
	if len(e.Metadata) > 0 {
		if b, err = jsonw.KeyValue(b, "metadata", e.Metadata); err != nil {
			return nil, err
		}
	}
	b = jsonw.OptString(b, "timerID", e.TimerID)
	b = jsonw.OptInt(b, "delayMs", e.DelayMs)
	b = jsonw.OptString(b, "level", e.Level)
	b = jsonw.OptString(b, "message", e.Message)
	b = jsonw.OptString(b, "variant", e.Variant)
	b = jsonw.OptString(b, "line", e.Line)
	b = jsonw.OptString(b, "content", e.Content)
	b = jsonw.OptString(b, "file", e.File)
	b = jsonw.OptString(b, "requestID", e.RequestID)
	b = jsonw.OptString(b, "answer", e.Answer)
	b = jsonw.OptString(b, "path", e.Path)
	b = jsonw.OptString(b, "branch", e.Branch)
	b = jsonw.OptString(b, "base", e.Base)
	b = jsonw.OptString(b, "commit", e.Commit)
	b = jsonw.OptInt(b, "maxBytes", int64(e.MaxBytes))
	b = jsonw.OptString(b, "frame", e.Frame)
	return append(b, '}'), nil
}

// appendHTTPResponse writes an HTTP answer: its headers in sorted order, as encoding/json
// writes a map.
func appendHTTPResponse(b []byte, r *httpapi.Response) []byte {
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
			b = jsonw.String(b, k)
			b = append(b, ':')
			b = jsonw.String(b, r.Headers[k])
		}
		b = append(b, '}')
	}
	b = jsonw.KeyString(b, "body", r.Body)
	if r.Stream {
		b = append(b, `,"stream":true`...)
	}
	b = jsonw.OptString(b, "logs", r.Logs)
	b = jsonw.OptString(b, "messages", r.Messages)
	b = jsonw.OptString(b, "worker", r.Worker)
	if x := r.Remote; x != nil {
		b = jsonw.String(append(b, `,"remote":{"url":`...), x.URL)
		b = jsonw.KeyString(b, "username", x.Username)
		b = jsonw.KeyString(b, "passwordEnv", x.PasswordEnv)
		if x.Insecure {
			b = append(b, `,"insecure":true`...)
		}
		b = append(b, '}')
	}
	b = jsonw.OptString(b, "directory", r.Directory)
	return append(jsonw.OptString(b, "asset", r.Asset), '}')
}
