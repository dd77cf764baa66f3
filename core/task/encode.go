package task

import (
	"strconv"

	"github.com/asyncagents/asyncagents/core/internal/jsonw"
)

// AppendJSON writes t as encoding/json writes the Task struct: the same keys in the same order,
// omitempty as the tags say. The status API's list writes a page of tasks with it: the first
// listing after a start built encoding/json's encoders for Task and all it holds (reflection
// over every field), which inside WebAssembly in Bun cost more than the listing itself.
// TestTaskEncodesAsTheStruct holds it to the struct's own encoding.
func AppendJSON(b []byte, t *Task) ([]byte, error) {
	b = append(b, `{"id":`...)
	b = jsonw.String(b, t.ID)
	b = jsonw.OptString(b, "sessionID", t.SessionID)
	b = jsonw.KeyString(b, "parentSessionID", t.ParentSessionID)
	b = jsonw.KeyString(b, "parentMessageID", t.ParentMessageID)
	b = jsonw.OptString(b, "parentAgent", t.ParentAgent)
	b = jsonw.OptString(b, "parentTitle", t.ParentTitle)
	b = jsonw.KeyString(b, "batchId", t.BatchID)
	b = jsonw.KeyString(b, "description", t.Description)
	b = jsonw.KeyString(b, "prompt", t.Prompt)
	b = jsonw.KeyString(b, "agent", t.Agent)
	b = jsonw.OptString(b, "worker", t.Worker)
	b = jsonw.KeyString(b, "status", string(t.Shown()))
	b = jsonw.OptInt(b, "noticeOwed", t.NoticeOwed)
	b = jsonw.KeyInt(b, "startedAt", t.StartedAt)
	b = jsonw.OptInt(b, "completedAt", t.CompletedAt)
	b = jsonw.OptString(b, "result", t.Result)
	if e := t.Error; e != nil {
		b = append(b, `,"error":{"name":`...)
		b = jsonw.String(b, e.Name)
		b = jsonw.KeyString(b, "message", e.Message)
		b = append(jsonw.OptInt(b, "statusCode", int64(e.StatusCode)), '}')
	}
	b = append(b, `,"progress":{"toolCalls":`...)
	b = strconv.AppendInt(b, int64(t.Progress.ToolCalls), 10)
	b = append(b, `,"lastTools":`...)
	b = jsonw.Strings(b, t.Progress.LastTools)
	b = append(jsonw.KeyInt(b, "lastUpdate", t.Progress.LastUpdate), '}')
	b = jsonw.KeyInt(b, "resumeCount", int64(t.ResumeCount))
	b = append(b, `,"isForked":`...)
	b = strconv.AppendBool(b, t.IsForked)
	b = jsonw.OptInt(b, "retrievedAt", t.RetrievedAt)
	if t.Queued {
		b = append(b, `,"queued":true`...)
	}
	if w := t.Waiting; w != nil {
		b = append(b, `,"waiting":{"limit":`...)
		b = jsonw.String(b, w.Limit)
		b = jsonw.KeyInt(b, "max", int64(w.Max))
		b = append(jsonw.KeyInt(b, "position", int64(w.Position)), '}')
	}
	b = jsonw.KeyInt(b, "depth", int64(t.Depth))
	b = jsonw.OptString(b, "cancelReason", t.CancelReason)
	b = jsonw.OptInt(b, "resumedAt", t.ResumedAt)
	b = jsonw.OptInt(b, "forkTokens", int64(t.ForkTokens))
	if len(t.Models) > 0 {
		b = append(b, `,"models":`...)
		b = jsonw.Strings(b, t.Models)
	}
	b = jsonw.OptString(b, "model", t.Model)
	if t.FallbackInfo != nil {
		var err error
		if b, err = jsonw.KeyValue(b, "fallbackInfo", t.FallbackInfo); err != nil {
			return nil, err
		}
	}
	b = jsonw.OptInt(b, "timeoutMs", t.TimeoutMs)
	b = jsonw.OptInt(b, "stalledSince", t.StalledSince)
	b = jsonw.OptInt(b, "queuedUntil", t.QueuedUntil)
	if len(t.Stalls) > 0 {
		b = append(b, `,"stalls":[`...)
		for i, sp := range t.Stalls {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"from":`...)
			b = strconv.AppendInt(b, sp.From, 10)
			b = append(jsonw.KeyInt(b, "to", sp.To), '}')
		}
		b = append(b, ']')
	}
	if t.Partial != nil {
		b = appendPartial(jsonw.Key(b, "partial"), t.Partial)
	}
	if k := t.Tokens; k != nil {
		b = append(b, `,"tokens":{"input":`...)
		b = strconv.AppendInt(b, k.Input, 10)
		b = jsonw.KeyInt(b, "output", k.Output)
		b = jsonw.KeyInt(b, "reasoning", k.Reasoning)
		b = jsonw.KeyInt(b, "cacheRead", k.CacheRead)
		b = append(jsonw.KeyInt(b, "cacheWrite", k.CacheWrite), '}')
	}
	if t.Cost != 0 {
		b = jsonw.Float(jsonw.Key(b, "cost"), t.Cost)
	}
	b = jsonw.OptInt(b, "steps", int64(t.Steps))
	if len(t.UsageMarks) > 0 {
		b = appendUsageMarks(jsonw.Key(b, "usageMarks"), t.UsageMarks)
	}
	if g := t.Budget; g != nil {
		b = append(b, `,"budget":{`...)
		n := len(b)
		b = jsonw.OptInt(b, "steps", int64(g.Steps))
		b = jsonw.OptInt(b, "tokens", g.Tokens)
		if g.CostUsd != 0 {
			b = jsonw.Float(jsonw.Key(b, "costUsd"), g.CostUsd)
		}
		if len(b) > n && b[n] == ',' {
			b = append(b[:n], b[n+1:]...) // the first field's comma
		}
		b = append(b, '}')
	}
	if len(t.Steers) > 0 {
		var err error
		if b, err = jsonw.KeyValue(b, "steers", t.Steers); err != nil {
			return nil, err
		}
	}
	if len(t.Permissions) > 0 {
		var err error
		if b, err = jsonw.KeyValue(b, "permissions", t.Permissions); err != nil {
			return nil, err
		}
	}
	if t.Worktree != nil {
		var err error
		if b, err = jsonw.KeyValue(b, "worktree", t.Worktree); err != nil {
			return nil, err
		}
	}
	if r := t.Retry; r != nil {
		b = append(b, `,"retry":{"attempt":`...)
		b = strconv.AppendInt(b, int64(r.Attempt), 10)
		b = jsonw.KeyString(b, "message", r.Message)
		b = append(jsonw.OptInt(b, "next", r.Next), '}')
	}
	b = jsonw.OptInt(b, "notifiedAt", t.NotifiedAt)
	if v := t.View; v != nil {
		b = append(b, `,"view":{"label":`...)
		b = jsonw.String(b, v.Label)
		b = jsonw.OptString(b, "budget", v.Budget)
		b = jsonw.OptString(b, "permission", v.Permission)
		b = jsonw.OptInt(b, "permissionAt", v.PermissionAt)
		b = jsonw.OptString(b, "permissionId", v.PermissionID)
		b = jsonw.OptString(b, "retry", v.Retry)
		b = append(b, `,"duration":`...)
		b = jsonw.String(b, v.Duration)
		b = jsonw.OptString(b, "tokens", v.Tokens)
		b = jsonw.OptString(b, "cost", v.Cost)
		b = jsonw.OptString(b, "queue", v.Queue)
		b = jsonw.OptString(b, "permissionWait", v.PermissionWait)
		if len(v.Changes) > 0 {
			b = jsonw.Strings(jsonw.Key(b, "changes"), v.Changes)
		}
		b = jsonw.OptString(b, "worker", v.Worker)
		if len(v.Attempts) > 0 {
			var err error
			if b, err = jsonw.KeyValue(b, "attempts", v.Attempts); err != nil {
				return nil, err
			}
		}
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

// appendPartial writes p as encoding/json does. Written by hand, not through KeyValue: a running
// child's partial work (up to MaxPartialTools tool runs) goes into its history line and its event
// frame on every change, and reflection was most of a change's cost.
func appendPartial(b []byte, p *Partial) []byte {
	b = append(b, '{')
	n := len(b)
	if p.Text != "" {
		b = jsonw.KeyString(b, "text", p.Text)
	}
	b = jsonw.OptInt(b, "textChars", int64(p.TextChars))
	if len(p.Tools) > 0 {
		b = append(jsonw.Key(b, "tools"), '[')
		for i, r := range p.Tools {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonw.OptString(jsonw.String(append(b, `{"name":`...), r.Name), "title", r.Title)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if len(b) > n && b[n] == ',' { // Key writes a comma before every field; the first has none
		b = append(b[:n], b[n+1:]...)
	}
	return append(b, '}')
}

// appendUsageMarks writes marks as encoding/json does. By hand: a running child's marks change
// with each of its messages, and the reflection of encoding/json was the one left on that path.
func appendUsageMarks(b []byte, marks []UsageMark) []byte {
	b = append(b, '[')
	for i, k := range marks {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonw.OptString(jsonw.String(append(b, `{"session":`...), k.Session), "message", k.Message)
		b = append(b, `,"tokens":{"input":`...)
		b = strconv.AppendInt(b, k.Tokens.Input, 10)
		b = jsonw.KeyInt(b, "output", k.Tokens.Output)
		b = jsonw.KeyInt(b, "reasoning", k.Tokens.Reasoning)
		b = jsonw.KeyInt(b, "cacheRead", k.Tokens.CacheRead)
		b = append(jsonw.KeyInt(b, "cacheWrite", k.Tokens.CacheWrite), '}')
		if k.Cost != 0 {
			b = jsonw.Float(jsonw.Key(b, "cost"), k.Cost)
		}
		b = append(jsonw.OptString(b, "step", k.Step), '}')
	}
	return append(b, ']')
}
