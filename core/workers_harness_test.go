package core

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/stretchr/testify/require"
)

// wkHarness is fbHarness with workers: it answers worker.health as the test says (healthErr by
// worker, else healthy) and keeps every effect.
type wkHarness struct {
	*fbHarness
	healthErr map[string]string
}

// twoWorkers is a config with w1 and w2 (2 tasks each) and 2 local slots.
func twoWorkers(mut func(*config.Config)) config.Config {
	cfg := config.Config{MaxConcurrentStarts: 2, Workers: map[string]config.WorkerConfig{
		"w1": {URL: "http://127.0.0.1:4101", PasswordEnv: "W1_PASSWORD", Directory: "/srv/w1/repo", MaxTasks: 2, LostAfterMs: 30_000},
		"w2": {URL: "https://w2.example:4096", Username: "bob", PasswordEnv: "W2_PASSWORD", Directory: "/srv/w2/repo", MaxTasks: 2},
	}}
	if mut != nil {
		mut(&cfg)
	}
	return cfg
}

func newWK(t *testing.T, cfg config.Config) *wkHarness {
	return &wkHarness{fbHarness: newFB(t, cfg), healthErr: map[string]string{}}
}

// run feeds an event and answers the health checks it asks for.
func (h *wkHarness) run(ev Event) []Effect {
	own := h.step(ev)
	all := own
	for _, e := range own {
		if e.Kind != EffectWorkerHealth {
			continue
		}
		if msg := h.healthErr[e.Worker]; msg != "" {
			all = append(all, h.run(Event{Type: EventEffectDone, EffectID: e.ID, Error: msg})...)
		} else {
			all = append(all, h.run(Event{Type: EventEffectDone, EffectID: e.ID, OK: true, Result: json.RawMessage(`{"healthy":true,"version":"1.18.33"}`)})...)
		}
	}
	return all
}

// state feeds a worker's stream state.
func (h *wkHarness) state(worker string, up bool, why string) []Effect {
	return h.run(Event{Type: EventWorkerState, Worker: worker, Up: up, Error: why})
}

// launchOn launches a task with worker (empty: no argument) and returns the tool's answer.
func (h *wkHarness) launchOn(desc, worker string) (Effect, []Effect) {
	extra := ""
	if worker != "" {
		extra = fmt.Sprintf(`,"worker":%q`, worker)
	}
	return h.launchArgs(desc, extra)
}

// launchArgs launches a task with extra arguments (JSON, with its leading comma).
func (h *wkHarness) launchArgs(desc, extra string) (Effect, []Effect) {
	eff := h.run(Event{Type: EventToolCall, CallID: "call_" + desc, Tool: ToolTask, SessionID: "ses_p", MessageID: "msg_p",
		Args: json.RawMessage(fmt.Sprintf(`{"description":%q,"prompt":"work","agent":"general"%s}`, desc, extra))})
	replies := ofKind(eff, EffectToolReply)
	require.Len(h.t, replies, 1)
	return replies[0], eff
}

// taskOf is the task a launch answered for.
func (h *wkHarness) taskOf(reply Effect) *run {
	id, _ := reply.Metadata["taskId"].(string)
	require.NotEmpty(h.t, id, "the launch made a task: %s", reply.Error)
	return h.m.task(id)
}

// from feeds an OpenCode event from worker's stream ("" for the local one).
func (h *wkHarness) from(worker, typ, props string) []Effect {
	return h.run(Event{Type: EventOpenCode, Worker: worker, Event: &OpenCodeEvent{Type: typ, Properties: json.RawMessage(props)}})
}

// answerOn has session's child, on worker, write text and go idle, through that worker's stream.
func (h *wkHarness) answerOn(worker, session, text string) []Effect {
	msgID := fmt.Sprintf("msg_%d", h.now)
	h.from(worker, "message.part.updated", fmt.Sprintf(`{"part":{"id":"prt_%d","sessionID":%q,"messageID":%q,"type":"text","text":%q,"time":{"end":%d}}}`, h.now, session, msgID, text, h.now+2))
	h.from(worker, "message.updated", fmt.Sprintf(`{"info":{"id":%q,"sessionID":%q,"role":"assistant","finish":"stop","time":{"created":%d,"completed":%d}}}`, msgID, session, h.now+1, h.now+2))
	return h.from(worker, "session.idle", fmt.Sprintf(`{"sessionID":%q}`, session))
}

// noSecret fails when anything the core wrote holds a password-like value or a URL's userinfo.
func noSecret(t *testing.T, texts ...string) {
	t.Helper()
	for _, s := range texts {
		require.NotContains(t, s, "hunter2")
		require.NotContains(t, strings.ToLower(s), "authorization")
	}
}
