package core

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// childStream is what a worker streams for one step of a remote child and its end: a tool part
// going pending, running and completed, the step's usage, the answer, and the idle events.
func childStream(session string) []OpenCodeEvent {
	ev := func(typ, props string) OpenCodeEvent {
		return OpenCodeEvent{Type: typ, Properties: json.RawMessage(props)}
	}
	tool := func(status, title string) OpenCodeEvent {
		return ev("message.part.updated", fmt.Sprintf(`{"part":{"id":"prt_t","sessionID":%q,"messageID":"msg_a","type":"tool","tool":"glob","callID":"c1","state":{"status":%q,"title":%q}}}`, session, status, title))
	}
	info := func(output int, finish string) OpenCodeEvent {
		return ev("message.updated", fmt.Sprintf(`{"info":{"id":"msg_a","sessionID":%q,"role":"assistant","finish":%q,"tokens":{"input":100,"output":%d,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0.01,"time":{"created":5,"completed":9}}}`, session, finish, output))
	}
	return []OpenCodeEvent{
		ev("session.status", fmt.Sprintf(`{"sessionID":%q,"status":{"type":"busy"}}`, session)),
		tool("pending", ""), tool("running", "*.json"), tool("completed", "*.json"),
		info(10, ""),
		ev("message.part.updated", fmt.Sprintf(`{"part":{"id":"prt_s","sessionID":%q,"messageID":"msg_a","type":"step-finish","reason":"stop","cost":0.01,"tokens":{"input":100,"output":20}}}`, session)),
		ev("message.part.updated", fmt.Sprintf(`{"part":{"id":"prt_x","sessionID":%q,"messageID":"msg_a","type":"text","text":"the answer","time":{"end":9}}}`, session)),
		info(20, "stop"),
		ev("session.status", fmt.Sprintf(`{"sessionID":%q,"status":{"type":"idle"}}`, session)),
		ev("session.idle", fmt.Sprintf(`{"sessionID":%q}`, session)),
	}
}

// A worker's events fed as one batch (the follow rule's grouping) leave a remote task as they
// do one by one: the same end, result, usage and partial work; the batch is one step, so the
// task's history line is written once for it, not once an event.
func TestWorkerEventsInOneBatchAsOneByOne(t *testing.T) {
	type outcome struct {
		Status, Result, Partial, Usage string
		Appends                        int
	}
	run := func(batch bool) outcome {
		h := newWK(t, twoWorkers(nil))
		h.state("w1", true, "")
		r, _ := h.launchOn("a", "w1")
		tk := h.taskOf(r)
		stream := childStream(tk.SessionID)
		var eff []Effect
		if batch {
			eff = h.run(Event{Type: EventOpenCode, Worker: "w1", Events: stream})
		} else {
			for _, e := range stream {
				eff = append(eff, h.run(Event{Type: EventOpenCode, Worker: "w1", Event: &e})...)
			}
		}
		appends := 0
		for _, e := range ofKind(eff, EffectHistoryAppend) {
			if strings.Contains(e.Line, tk.ID) {
				appends++
			}
		}
		p, _ := json.Marshal(tk.Partial)
		u, _ := json.Marshal(tk.Usage)
		return outcome{string(tk.Status), tk.Result, string(p), string(u), appends}
	}
	one, batched := run(false), run(true)
	require.Equal(t, "completed", one.Status)
	require.Equal(t, "the answer", one.Result)
	require.Contains(t, one.Partial, `"title":"*.json"`)
	require.Equal(t, one.Status, batched.Status)
	require.Equal(t, one.Result, batched.Result)
	require.Equal(t, one.Partial, batched.Partial)
	require.Equal(t, one.Usage, batched.Usage)
	// Its end is written in the step that reads the child's messages, after the idle event.
	require.Greater(t, one.Appends, 4, "one by one, the task is written at each change")
	require.Equal(t, 2, batched.Appends, "a batch is one step: the task is written once for it, and once at its end")
}

// The follow effect tells the host what may wait and what one event may stand for: progress
// waits, a child's end and a permission request do not.
func TestWorkerFollowCarriesTheGroupingRule(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	f := ofKind(h.run(Event{Type: EventStart}), EffectWorkerFollow)
	require.Len(t, f, 2)
	rule := f[0].Follow
	require.NotNil(t, rule)
	require.Positive(t, rule.BatchMs)
	for _, urgent := range []string{"session.idle", "session.error", "permission.asked", "permission.replied", "session.deleted"} {
		require.NotContains(t, rule.Defer, urgent)
	}
	require.Equal(t, "part.id", rule.Coalesce["message.part.updated"])
	for typ := range rule.Coalesce {
		require.Contains(t, rule.Defer, typ, "only an event that may wait can be replaced by a later one")
	}
}
