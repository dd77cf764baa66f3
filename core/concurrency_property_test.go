package core

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/stretchr/testify/require"
)

// slotWorld plays OpenCode for the concurrency limits: launches, answers, fallbacks (a retry
// status on a model with another after it) and cancels, in a random order.
type slotWorld struct {
	t       *testing.T
	rng     *rand.Rand
	m       *Machine
	now     int64
	created int
	calls   int
	refills int // steps that left a task waiting with its session for a slot on its next model
}

var slotConfig = config.Config{
	MaxConcurrentStarts: 4,
	Concurrency: config.ConcurrencyConfig{
		Default:   2,
		Providers: map[string]int{"p": 2},
		Models:    map[string]int{"p/x": 1, "q/y": 0},
	},
	Agents: map[string]config.AgentModels{
		"general": {Models: []string{"p/x", "p/z", "q/y", "r/w"}},
		"explore": {Models: []string{"r/w", "p/x"}},
	},
	Fallback: config.FallbackConfig{CooldownMs: config.Int64(0)},
}

func (w *slotWorld) step(ev Event) {
	w.now += int64(1 + w.rng.Intn(50))
	queue := w.m.Step(w.now, ev)
	for len(queue) > 0 {
		e := queue[0]
		queue = queue[1:]
		done := func(result string) {
			queue = append(queue, w.m.Step(w.now, Event{Type: EventEffectDone, EffectID: e.ID, OK: true, Result: json.RawMessage(result)})...)
		}
		switch e.Kind {
		case EffectAgentsList:
			done(`[{"name":"build","mode":"primary"},{"name":"general","mode":"subagent"},{"name":"explore","mode":"subagent"}]`)
		case EffectSessionCreate:
			w.created++
			done(fmt.Sprintf(`{"id":"ses_%d"}`, w.created))
		case EffectPromptAsync:
			done("")
			if e.SessionID != "ses_parent" { // the child's turn starts
				busy := fmt.Sprintf(`{"sessionID":%q,"status":{"type":"busy"}}`, e.SessionID)
				queue = append(queue, w.m.Step(w.now, Event{Type: EventOpenCode, Event: &OpenCodeEvent{Type: "session.status", Properties: json.RawMessage(busy)}})...)
			}
		case EffectAbort, EffectSessionDelete:
			done("")
		case EffectMessages:
			done("[]")
		case EffectStatus:
			done("{}")
		}
	}
	w.check()
}

func (w *slotWorld) oc(typ, props string) {
	w.step(Event{Type: EventOpenCode, Event: &OpenCodeEvent{Type: typ, Properties: json.RawMessage(props)}})
}

// check: no limit runs more than its value, and no task waits while its slot is free.
func (w *slotWorld) check() {
	lim := w.m.limits()
	u := lim.InUse(records(w.m.activeTasks()))
	require.LessOrEqual(w.t, u.Total, slotConfig.MaxConcurrentStarts)
	for _, t := range w.m.activeTasks() {
		l := w.m.cfg.Concurrency.LimitFor(t.Model)
		if l.Max > 0 {
			require.LessOrEqual(w.t, u.ByKey[l.Key], l.Max, "limit %s", l.Option)
		}
		if t.refill {
			w.refills++
		}
		if t.Queued {
			require.NotNil(w.t, t.Waiting, "a queued task says what it waits for")
			require.NotNil(w.t, lim.BlockedBy(t.Model, u), "task %s on %s waits while its slot is free (a leak)", t.ID, t.Model)
		}
	}
}

// running picks a running (not queued) task with a session, or nil.
func (w *slotWorld) running() *run {
	var rs []*run
	for _, t := range w.m.activeTasks() {
		if !t.Queued && t.SessionID != "" && !t.switching {
			rs = append(rs, t)
		}
	}
	if len(rs) == 0 {
		return nil
	}
	return rs[w.rng.Intn(len(rs))]
}

func (w *slotWorld) act() {
	switch r := w.rng.Intn(10); {
	case r < 4:
		w.calls++
		agent := []string{"general", "explore"}[w.rng.Intn(2)]
		w.step(Event{Type: EventToolCall, CallID: fmt.Sprint("c", w.calls), Tool: ToolTask, SessionID: "ses_parent", MessageID: fmt.Sprint("m", w.calls%3),
			Args: json.RawMessage(fmt.Sprintf(`{"description":"t%d","prompt":"p","agent":%q}`, w.calls, agent))})
	case r < 7:
		if t := w.running(); t != nil {
			msg := fmt.Sprint("msg_", w.now)
			w.oc("message.part.updated", fmt.Sprintf(`{"part":{"id":"prt_%d","sessionID":%q,"messageID":%q,"type":"text","text":"done","time":{"end":1}}}`, w.now, t.SessionID, msg))
			w.oc("message.updated", fmt.Sprintf(`{"info":{"id":%q,"sessionID":%q,"role":"assistant","finish":"stop","time":{"created":%d,"completed":%d}}}`, msg, t.SessionID, w.now+1, w.now+2))
			w.oc("session.idle", fmt.Sprintf(`{"sessionID":%q}`, t.SessionID))
		}
	case r < 9:
		if t := w.running(); t != nil {
			// A rate limit OpenCode retries: with a model after it, the task leaves this one.
			w.oc("session.status", fmt.Sprintf(`{"sessionID":%q,"status":{"type":"retry","message":"Rate limit exceeded"}}`, t.SessionID))
			w.oc("message.updated", fmt.Sprintf(`{"info":{"id":"msg_f%d","sessionID":%q,"role":"assistant","error":{"name":"APIError","data":{"message":"Rate limit exceeded","statusCode":429}},"time":{"created":1,"completed":%d}}}`, w.now, t.SessionID, w.now))
			w.oc("session.idle", fmt.Sprintf(`{"sessionID":%q}`, t.SessionID))
		}
	default:
		if act := w.m.activeTasks(); len(act) > 0 {
			t := act[w.rng.Intn(len(act))]
			w.step(Event{Type: EventToolCall, CallID: fmt.Sprint("x", w.now), Tool: ToolCancel, SessionID: "ses_parent", Args: json.RawMessage(fmt.Sprintf(`{"task_id":%q}`, t.ID))})
		}
	}
}

// Over random interleavings of launches, answers, fallbacks and cancels, no limit's running
// count ever exceeds its value, no slot leaks (a task never waits while its slot is free), and
// every task ends once the children answer.
func TestConcurrencyLimitsHold(t *testing.T) {
	refills := 0
	for seed := int64(1); seed <= 100; seed++ {
		w := &slotWorld{t: t, rng: rand.New(rand.NewSource(seed)), m: NewMachine(slotConfig), now: 1_000_000}
		for range 120 {
			w.act()
		}
		for range 400 { // drain: the children answer until nothing is left
			t := w.running()
			if t == nil {
				break
			}
			msg := fmt.Sprint("msg_", w.now)
			w.oc("message.part.updated", fmt.Sprintf(`{"part":{"id":"prt_%d","sessionID":%q,"messageID":%q,"type":"text","text":"done","time":{"end":1}}}`, w.now, t.SessionID, msg))
			w.oc("message.updated", fmt.Sprintf(`{"info":{"id":%q,"sessionID":%q,"role":"assistant","finish":"stop","time":{"created":%d,"completed":%d}}}`, msg, t.SessionID, w.now+1, w.now+2))
			w.oc("session.idle", fmt.Sprintf(`{"sessionID":%q}`, t.SessionID))
		}
		require.Empty(t, w.m.activeTasks(), "seed %d: every task ended", seed)
		refills += w.refills
	}
	require.Positive(t, refills, "some fallback waited for a slot on its next model")
}
