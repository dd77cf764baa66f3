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
	// Its progress waits for the progress timer (history_progress.go), and its end, written in
	// the step that reads the child's messages after the idle event, takes the progress with it:
	// one by one or in a batch, the task is written the same.
	require.Equal(t, one.Appends, batched.Appends)
	require.Equal(t, 2, batched.Appends)
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
	// The types the host passes on: all the core reads of a child, not a session's title.
	for _, typ := range append(rule.Defer, "session.idle", "session.error", "permission.asked", "permission.replied", "session.deleted", "session.created", "server.instance.disposed") {
		require.Contains(t, rule.Types, typ)
	}
	require.NotContains(t, rule.Types, "session.updated")
}

// The rule a benchmark reads (WorkerFollowRule) is the one the follow effect carries, and a copy:
// a caller that changes it changes nothing the core hands a host.
func TestWorkerFollowRuleIsTheEffectsAndACopy(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	f := ofKind(h.run(Event{Type: EventStart}), EffectWorkerFollow)
	given, err := json.Marshal(f[0].Follow)
	require.NoError(t, err)
	read := func() string {
		b, err := json.Marshal(WorkerFollowRule())
		require.NoError(t, err)
		return string(b)
	}
	require.JSONEq(t, string(given), read())
	r := WorkerFollowRule()
	r.Defer[0], r.Types[0], r.Coalesce["message.part.updated"] = "changed", "changed", "changed"
	require.JSONEq(t, string(given), read())
	again, err := json.Marshal(ofKind(newWK(t, twoWorkers(nil)).run(Event{Type: EventStart}), EffectWorkerFollow)[0].Follow)
	require.NoError(t, err)
	require.JSONEq(t, string(given), string(again))
}

// A worker's session.updated, passed on by a host that does not follow the rule's types, is
// not read: a session on a worker launches no batch of ours to name.
func TestAWorkersSessionTitleIsNotRead(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	h.state("w1", true, "")
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	h.run(Event{Type: EventOpenCode, Worker: "w1", Event: &OpenCodeEvent{Type: "session.updated",
		Properties: json.RawMessage(fmt.Sprintf(`{"info":{"id":%q,"title":"a remote title"}}`, tk.SessionID))}})
	require.Empty(t, h.m.sessionTitle.get(tk.SessionID))
	h.run(Event{Type: EventOpenCode, Event: &OpenCodeEvent{Type: "session.updated",
		Properties: json.RawMessage(`{"info":{"id":"ses_p","title":"the parent's title"}}`)}})
	require.Equal(t, "the parent's title", h.m.sessionTitle.get("ses_p"), "the local stream's titles are read")
}

// A launch that waits for the health of the worker it names counts in its batch: a sibling that
// ends meanwhile tells 1/2 and does not wake the parent (the batch's last one does), or the
// parent would get a turn before its batch is done, and another after it.
func TestALaunchWaitingForItsWorkersHealthCountsInItsBatch(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	a := h.taskOf(first(h.launchOn("a", "")))
	// w1's stream is not known up: b's launch asks its health, unanswered yet.
	eff := h.step(Event{Type: EventToolCall, CallID: "call_b", Tool: ToolTask, SessionID: "ses_p", MessageID: "msg_p",
		Args: json.RawMessage(`{"description":"b","prompt":"work","agent":"general","worker":"w1"}`)})
	health := ofKind(eff, EffectWorkerHealth)
	require.Len(t, health, 1)
	require.Empty(t, ofKind(eff, EffectToolReply), "b waits for w1's health")

	early := prompts(h.all(func() { h.answer(a.SessionID, "", "a's answer") }), "ses_p")
	require.Empty(t, early, "b still runs: a's notice waits for the busy parent, and wakes nothing")

	eff = h.run(Event{Type: EventEffectDone, EffectID: health[0].ID, OK: true, Result: json.RawMessage(`{"healthy":true,"version":"1.18.33"}`)})
	b := h.taskOf(ofKind(eff, EffectToolReply)[0])
	require.Equal(t, "w1", b.Worker)
	notice := prompts(h.all(func() { h.answerOn("w1", b.SessionID, "b's answer") }), "ses_p")
	require.Len(t, notice, 1, "the batch's end: one message for both")
	require.False(t, notice[0].NoReply, "the batch's last end wakes the parent")
	var texts []string
	for _, p := range notice[0].Parts {
		texts = append(texts, p.Text)
	}
	require.Contains(t, texts[0], "Task Progress: 1/2")
	require.Contains(t, strings.Join(texts, "\n"), "Task Progress: 2/2")
}

func first(e Effect, _ []Effect) Effect { return e }
