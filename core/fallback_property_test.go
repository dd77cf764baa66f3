package core

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strconv"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

// fbWorld plays OpenCode for tasks with the chain A, B: a turn on A fails half the time with a
// rate limit, the way OpenCode 1.18 reports it (the error and an idle first, the failed message
// completed and a second idle later), with events lost, repeated and reordered. A turn on B
// answers. OpenCode drops a prompt that reaches a child whose turn is still winding down; here
// that fails the test outright.
type fbWorld struct {
	t       *testing.T
	rng     *rand.Rand
	m       *Machine
	now     int64
	queue   []Event
	timers  map[string]bool
	created int
	notices map[string]int
	// per child: its turn is running, how many prompts it got, and its messages so far
	running  map[string]bool
	attempts map[string]int
	msgs     map[string][]map[string]any
	failedOn map[string]bool // a turn on A failed
}

func (w *fbWorld) oc(typ string, props any) Event {
	b, _ := json.Marshal(props)
	return Event{Type: EventOpenCode, Event: &OpenCodeEvent{Type: typ, Properties: b}}
}

func (w *fbWorld) maybe(n int, ev Event) {
	for i := 0; i < n; i++ {
		w.queue = append(w.queue, ev)
	}
}

func (w *fbWorld) carryOut(effects []Effect) {
	for _, e := range effects {
		switch e.Kind {
		case EffectAgentsList:
			w.queue = append(w.queue, Event{Type: EventEffectDone, EffectID: e.ID, OK: true,
				Result: json.RawMessage(`[{"name":"build","mode":"primary"},{"name":"general","mode":"subagent"}]`)})
		case EffectSessionCreate:
			w.created++
			w.queue = append(w.queue, Event{Type: EventEffectDone, EffectID: e.ID, OK: true, Result: json.RawMessage(fmt.Sprintf(`{"id":"ses_%d"}`, w.created))})
		case EffectPromptAsync:
			if e.SessionID == "ses_parent" {
				for _, n := range splitNotices(e) {
					w.notices[taskIDIn.FindStringSubmatch(n.Parts[1].Text)[1]]++
				}
			} else {
				w.prompt(e.SessionID, e.Model)
			}
			w.queue = append(w.queue, Event{Type: EventEffectDone, EffectID: e.ID, OK: true})
		case EffectMessages:
			b, _ := json.Marshal(w.msgs[e.SessionID])
			w.queue = append(w.queue, Event{Type: EventEffectDone, EffectID: e.ID, OK: true, Result: b})
		case EffectStatus:
			busy := map[string]any{}
			for id, r := range w.running {
				if r {
					busy[id] = map[string]string{"type": "busy"}
				}
			}
			b, _ := json.Marshal(busy)
			w.queue = append(w.queue, Event{Type: EventEffectDone, EffectID: e.ID, OK: true, Result: b})
		case EffectTimerSet:
			if e.TimerID != HeartbeatTimer {
				w.timers[e.TimerID] = true
			}
		case EffectTimerClear:
			delete(w.timers, e.TimerID)
		case EffectToolReply:
			if e.Error != "" {
				w.t.Fatalf("launch failed: %s", e.Error)
			}
		case EffectAbort, EffectSummarize:
			w.t.Fatalf("unexpected %s: no retry status and no context error in this world", e.Kind)
		}
	}
}

// prompt starts a turn of the child on model.
func (w *fbWorld) prompt(id, model string) {
	if w.running[id] {
		w.t.Fatalf("prompt to %s on %s while its previous turn still runs: OpenCode would drop it", id, model)
	}
	w.running[id] = true
	w.attempts[id]++
	// OpenCode delivers a session's events in order: nothing of the previous turn comes after
	// this turn's. What is still queued of it counts as lost.
	kept := w.queue[:0]
	for _, ev := range w.queue {
		if ev.Type == EventOpenCode && sessionOf(ev) == id {
			continue
		}
		kept = append(kept, ev)
	}
	w.queue = kept
	w.msgs[id] = append(w.msgs[id], map[string]any{"info": map[string]any{"id": fmt.Sprintf("u_%s_%d", id, w.attempts[id]), "role": "user", "time": map[string]any{"created": w.now}}, "parts": []any{}})
	w.maybe(w.rng.Intn(2), w.oc("session.status", map[string]any{"sessionID": id, "status": map[string]any{"type": "busy"}}))
	fail := model == "mock/a" && w.rng.Intn(2) == 0
	w.queue = append(w.queue, Event{Type: "child.turn", SessionID: id, Agent: model, OK: !fail})
}

func sessionOf(ev Event) string {
	var p struct {
		SessionID string `json:"sessionID"`
		Info      struct {
			SessionID string `json:"sessionID"`
		} `json:"info"`
		Part struct {
			SessionID string `json:"sessionID"`
		} `json:"part"`
	}
	_ = json.Unmarshal(ev.Event.Properties, &p)
	switch {
	case p.SessionID != "":
		return p.SessionID
	case p.Info.SessionID != "":
		return p.Info.SessionID
	}
	return p.Part.SessionID
}

func (w *fbWorld) turn(ev Event) {
	id := ev.SessionID
	msgID := fmt.Sprintf("a_%s_%d", id, w.attempts[id])
	created := w.now
	rate := map[string]any{"name": "APIError", "data": map[string]any{"message": "Rate limit reached for requests", "statusCode": 429, "isRetryable": true}}
	if !ev.OK {
		w.failedOn[id] = true
		info := map[string]any{"id": msgID, "sessionID": id, "role": "assistant", "error": rate, "time": map[string]any{"created": created}}
		w.msgs[id] = append(w.msgs[id], map[string]any{"info": info, "parts": []any{}})
		w.maybe(w.rng.Intn(2), w.oc("message.updated", map[string]any{"info": info}))
		w.maybe(w.rng.Intn(2), w.oc("session.error", map[string]any{"sessionID": id, "error": rate}))
		w.maybe(w.rng.Intn(3), w.oc("session.idle", map[string]any{"sessionID": id}))
		w.queue = append(w.queue, Event{Type: "child.settle", SessionID: id, MessageID: msgID})
		return
	}
	w.running[id] = false
	info := map[string]any{"id": msgID, "sessionID": id, "role": "assistant", "finish": "stop", "time": map[string]any{"created": created, "completed": created + 1}}
	w.msgs[id] = append(w.msgs[id], map[string]any{"info": info, "parts": []any{map[string]any{"type": "text", "text": "result of " + id}}})
	w.maybe(w.rng.Intn(2), w.oc("message.part.updated", map[string]any{"part": map[string]any{"id": "t_" + msgID, "sessionID": id, "messageID": msgID, "type": "text", "text": "result of " + id, "time": map[string]any{"end": created + 1}}}))
	w.maybe(w.rng.Intn(2), w.oc("message.updated", map[string]any{"info": info}))
	w.maybe(w.rng.Intn(3), w.oc("session.idle", map[string]any{"sessionID": id}))
}

// settle ends a failed turn: the message is completed, then the session is idle for good.
func (w *fbWorld) settle(ev Event) {
	id := ev.SessionID
	w.running[id] = false
	last := w.msgs[id][len(w.msgs[id])-1]["info"].(map[string]any)
	last["time"].(map[string]any)["completed"] = w.now
	w.maybe(w.rng.Intn(2), w.oc("message.updated", map[string]any{"info": last}))
	w.maybe(w.rng.Intn(3), w.oc("session.idle", map[string]any{"sessionID": id}))
}

func (w *fbWorld) run() {
	for step := 0; step < 5000; step++ {
		w.now += int64(1 + w.rng.Intn(400))
		if len(w.queue) == 0 {
			if len(w.timers) == 0 {
				return
			}
			ids := make([]string, 0, len(w.timers))
			for id := range w.timers {
				ids = append(ids, id)
			}
			sort.Strings(ids)
			for _, id := range ids {
				delete(w.timers, id)
				w.carryOut(w.m.Step(w.now, Event{Type: EventTimer, TimerID: id}))
			}
			continue
		}
		if w.rng.Intn(8) == 0 {
			w.carryOut(w.m.Step(w.now, w.oc("session.idle", map[string]any{"sessionID": "ses_parent"})))
		}
		i := w.rng.Intn(len(w.queue))
		ev := w.queue[i]
		w.queue = append(w.queue[:i], w.queue[i+1:]...)
		switch ev.Type {
		case "child.turn":
			w.turn(ev)
		case "child.settle":
			w.settle(ev)
		default:
			w.carryOut(w.m.Step(w.now, ev))
		}
	}
	w.t.Fatal("the world did not settle in 5000 steps")
}

// TestFallbackUnderRandomEventOrders: whatever the order, loss and repetition of OpenCode's
// reports of failed turns, every task ends completed (on B when A failed), with one notice, no
// prompt ever reaches a child whose turn still runs, and nothing is left pending.
func TestFallbackUnderRandomEventOrders(t *testing.T) {
	seeds := int64(300)
	if os.Getenv("ASYNCAGENTS_SEEDS") != "" {
		seeds, _ = strconv.ParseInt(os.Getenv("ASYNCAGENTS_SEEDS"), 10, 64)
	}
	for seed := int64(1); seed <= seeds; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			cfg := config.Config{MaxConcurrentStarts: 1 + rng.Intn(4), Agents: map[string]config.AgentModels{"general": {Models: []string{"mock/a", "mock/b"}}}}
			w := &fbWorld{t: t, rng: rng, m: NewMachine(cfg), timers: map[string]bool{}, notices: map[string]int{},
				running: map[string]bool{}, attempts: map[string]int{}, msgs: map[string][]map[string]any{}, failedOn: map[string]bool{}}
			tasks := 1 + rng.Intn(5)
			for i := 0; i < tasks; i++ {
				args := fmt.Sprintf(`{"description":"job %d","prompt":"p","agent":"general"}`, i)
				w.carryOut(w.m.Step(w.now, Event{Type: EventToolCall, CallID: fmt.Sprint("call", i), Tool: ToolTask, SessionID: "ses_parent", MessageID: "msg_1", Args: json.RawMessage(args)}))
			}
			w.run()
			w.carryOut(w.m.Step(w.now+1, w.oc("session.idle", map[string]any{"sessionID": "ses_parent"})))
			if len(w.m.tasks) != tasks {
				t.Fatalf("%d tasks, want %d", len(w.m.tasks), tasks)
			}
			for id, tk := range w.m.tasks {
				if tk.Status != task.StatusCompleted || tk.Result != "result of "+tk.SessionID {
					t.Fatalf("task %s ended %s %q %+v", id, tk.Status, tk.Result, tk.Error)
				}
				if n := w.notices[id]; n != 1 {
					t.Fatalf("task %s got %d notices, want 1", id, n)
				}
				info := tk.FallbackInfo
				want := "mock/a"
				if w.failedOn[tk.SessionID] {
					want = "mock/b"
				}
				if info.SuccessfulModel != want || info.Occurred != w.failedOn[tk.SessionID] {
					t.Fatalf("task %s: fallbackInfo %+v, want success on %s", id, info, want)
				}
			}
			if len(w.m.pending) != 0 {
				t.Fatalf("%d effects still pending after the world settled", len(w.m.pending))
			}
		})
	}
}
