package core

import "strconv"

// appendTask writes t as encoding/json writes the Task struct: the same keys in the same order,
// omitempty as the tags say. The status API's list writes a page of tasks with it: the first
// listing after a start built encoding/json's encoders for Task and all it holds (reflection
// over every field), which inside WebAssembly in Bun cost more than the listing itself.
// TestTaskEncodesAsTheStruct holds it to the struct's own encoding.
func appendTask(b []byte, t *Task) ([]byte, error) {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, t.ID)
	b = appendOptString(b, "sessionID", t.SessionID)
	b = appendKeyString(b, "parentSessionID", t.ParentSessionID)
	b = appendKeyString(b, "parentMessageID", t.ParentMessageID)
	b = appendOptString(b, "parentAgent", t.ParentAgent)
	b = appendKeyString(b, "batchId", t.BatchID)
	b = appendKeyString(b, "description", t.Description)
	b = appendKeyString(b, "prompt", t.Prompt)
	b = appendKeyString(b, "agent", t.Agent)
	b = appendKeyString(b, "status", string(t.Status))
	b = appendKeyInt(b, "startedAt", t.StartedAt)
	b = appendOptInt(b, "completedAt", t.CompletedAt)
	b = appendOptString(b, "result", t.Result)
	if e := t.Error; e != nil {
		b = append(b, `,"error":{"name":`...)
		b = appendJSONString(b, e.Name)
		b = appendKeyString(b, "message", e.Message)
		b = append(appendOptInt(b, "statusCode", int64(e.StatusCode)), '}')
	}
	b = append(b, `,"progress":{"toolCalls":`...)
	b = strconv.AppendInt(b, int64(t.Progress.ToolCalls), 10)
	b = append(b, `,"lastTools":`...)
	b = appendStrings(b, t.Progress.LastTools)
	b = append(appendKeyInt(b, "lastUpdate", t.Progress.LastUpdate), '}')
	b = appendKeyInt(b, "resumeCount", int64(t.ResumeCount))
	b = append(b, `,"isForked":`...)
	b = strconv.AppendBool(b, t.IsForked)
	b = appendOptInt(b, "retrievedAt", t.RetrievedAt)
	if t.Queued {
		b = append(b, `,"queued":true`...)
	}
	b = appendKeyInt(b, "depth", int64(t.Depth))
	b = appendOptString(b, "cancelReason", t.CancelReason)
	b = appendOptInt(b, "resumedAt", t.ResumedAt)
	b = appendOptInt(b, "forkTokens", int64(t.ForkTokens))
	if len(t.Models) > 0 {
		b = append(b, `,"models":`...)
		b = appendStrings(b, t.Models)
	}
	b = appendOptString(b, "model", t.Model)
	if t.FallbackInfo != nil {
		var err error
		if b, err = appendKeyValue(b, "fallbackInfo", t.FallbackInfo); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}
