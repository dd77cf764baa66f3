package core

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

// liveWorld drives a machine through random interleavings of a child's activity, silence, the
// polls that look for stalls, the parent's busy spells, cancels, wall-clock limits and
// completions, and records every notice the parent gets.
type liveWorld struct {
	t     *testing.T
	rng   *rand.Rand
	m     *Machine
	now   int64
	tasks []string // child session IDs
	// stallNotices counts the stall notices per task and stall (its StalledSince when the notice
	// went out); finals the other notices per task; ended marks the tasks whose final notice went.
	stallNotices map[string]map[int64]int
	finals       map[string]int
	ended        map[string]bool
	parts        int
	// lastSince is each task's stall under way as seen after the latest step: a held notice may
	// go out in the step that ends its task (another task's failure flushes the held notices),
	// and the harness sees the task only after that step.
	lastSince map[string]int64
}

func (w *liveWorld) step(ev Event) {
	queue := w.m.Step(w.now, ev)
	for len(queue) > 0 {
		e := queue[0]
		queue = queue[1:]
		var reply *Event
		switch e.Kind {
		case EffectAgentsList:
			reply = &Event{Type: EventEffectDone, EffectID: e.ID, OK: true, Result: json.RawMessage(`[{"name":"general","mode":"subagent"}]`)}
		case EffectSessionCreate:
			id := fmt.Sprintf("ses_c%d", len(w.tasks)+1)
			w.tasks = append(w.tasks, id)
			reply = &Event{Type: EventEffectDone, EffectID: e.ID, OK: true, Result: json.RawMessage(fmt.Sprintf(`{"id":%q}`, id))}
		case EffectPromptAsync:
			if e.SessionID == "ses_p" {
				// A stall's notice wakes the parent only by going with a final notice that does
				// (the notices ready together go as one message).
				final := false
				for _, n := range splitNotices(e) {
					final = final || !strings.HasPrefix(n.Parts[0].Text, "⚠")
				}
				for _, n := range splitNotices(e) {
					if final && strings.HasPrefix(n.Parts[0].Text, "⚠") {
						n.NoReply = true
					}
					w.notice(n)
				}
			}
			reply = &Event{Type: EventEffectDone, EffectID: e.ID, OK: true}
		case EffectStatus:
			busy := map[string]any{}
			for _, id := range w.tasks {
				busy[id] = map[string]string{"type": "busy"}
			}
			b, _ := json.Marshal(busy)
			reply = &Event{Type: EventEffectDone, EffectID: e.ID, OK: true, Result: b}
		case EffectMessages:
			reply = &Event{Type: EventEffectDone, EffectID: e.ID, OK: true, Result: json.RawMessage(`[]`)}
		case EffectAbort:
			reply = &Event{Type: EventEffectDone, EffectID: e.ID, OK: true}
		}
		if reply != nil {
			queue = append(queue, w.m.Step(w.now, *reply)...)
		}
	}
	// A stall mark never outlives its task.
	for _, id := range w.tasks {
		tk := w.m.task(id)
		if tk != nil && tk.Status.Terminal() && tk.StalledSince != 0 {
			w.t.Fatalf("task %s ended %s and is still marked stalled", id, tk.Status)
		}
		if tk != nil && tk.StalledSince != 0 {
			w.lastSince[id] = tk.StalledSince
		}
	}
}

func (w *liveWorld) notice(e Effect) {
	tk := w.m.task(e.TaskID)
	if tk == nil {
		w.t.Fatalf("a notice for unknown task %s", e.TaskID)
	}
	id := tk.SessionID
	if strings.HasPrefix(e.Parts[0].Text, "⚠") {
		if w.ended[id] {
			w.t.Fatalf("task %s: a stall notice after its final notice", id)
		}
		since := tk.StalledSince
		if tk.Status.Terminal() {
			since = w.lastSince[id] // the task ended after the notice, in the same step
		}
		if since == 0 || !e.NoReply {
			w.t.Fatalf("task %s: a stall notice for a task not stalled (%s), or one that wakes the parent", id, tk.Status)
		}
		if w.stallNotices[id] == nil {
			w.stallNotices[id] = map[int64]int{}
		}
		if w.stallNotices[id][since]++; w.stallNotices[id][since] > 1 {
			w.t.Fatalf("task %s: two notices for one stall", id)
		}
		return
	}
	w.finals[id]++
	w.ended[id] = true
}

func (w *liveWorld) oc(typ, props string) {
	w.step(Event{Type: EventOpenCode, Event: &OpenCodeEvent{Type: typ, Properties: json.RawMessage(props)}})
}

// act does one random thing to one running child, or to the parent.
func (w *liveWorld) act(warn int64) {
	w.now += w.rng.Int63n(warn * 3 / 2)
	id := w.tasks[w.rng.Intn(len(w.tasks))]
	w.parts++
	switch w.rng.Intn(9) {
	case 0, 1: // text
		w.oc("message.part.updated", fmt.Sprintf(`{"part":{"id":"prt_%d","sessionID":%q,"messageID":"msg_%s","type":"text","text":"work %d","time":{"start":1,"end":%d}}}`, w.parts, id, id, w.parts, w.rng.Intn(2)))
	case 2: // a tool starts or ends
		status := []string{"running", "completed"}[w.rng.Intn(2)]
		w.oc("message.part.updated", fmt.Sprintf(`{"part":{"id":"prt_t%s","sessionID":%q,"messageID":"msg_%s","type":"tool","callID":"call_%s","tool":"bash","state":{"status":%q,"title":"make"}}}`, id, id, id, id, status))
	case 3: // the parent's turn starts or ends
		if w.rng.Intn(2) == 0 {
			w.oc("session.status", `{"sessionID":"ses_p","status":{"type":"busy"}}`)
		} else {
			w.oc("session.idle", `{"sessionID":"ses_p"}`)
		}
	case 4:
		if w.rng.Intn(4) == 0 {
			w.step(Event{Type: EventToolCall, CallID: fmt.Sprint("cancel", w.parts), Tool: ToolCancel, SessionID: "ses_p", Args: json.RawMessage(fmt.Sprintf(`{"task_id":%q}`, id))})
		}
	case 5:
		if w.rng.Intn(3) == 0 {
			w.complete(id)
		}
	default: // silence, then a poll
		w.step(Event{Type: EventTimer, TimerID: pollTimer})
	}
}

// complete has the child answer and go idle.
func (w *liveWorld) complete(id string) {
	msg := fmt.Sprintf("msg_done_%s", id)
	w.oc("message.part.updated", fmt.Sprintf(`{"part":{"id":"prt_done_%s","sessionID":%q,"messageID":%q,"type":"text","text":"done","time":{"start":1,"end":2}}}`, id, id, msg))
	w.oc("message.updated", fmt.Sprintf(`{"info":{"id":%q,"sessionID":%q,"role":"assistant","finish":"stop","time":{"created":%d,"completed":%d}}}`, msg, id, w.now, w.now))
	w.oc("session.idle", fmt.Sprintf(`{"sessionID":%q}`, id))
}

// Over random interleavings of activity, silence, cancels, wall-clock limits and completions: a
// task gets at most one stall notice per stall, never one after its final notice, exactly one
// final notice, and no stall mark outlives it.
func TestLivenessUnderRandomInterleavings(t *testing.T) {
	stalls := 0
	for seed := int64(1); seed <= 200; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			warn := int64(1000 + rng.Intn(5000))
			cfg := config.Config{Stall: config.StallConfig{WarnAfterMs: &warn}}
			w := &liveWorld{t: t, rng: rng, m: NewMachine(cfg), now: 1_000_000,
				stallNotices: map[string]map[int64]int{}, finals: map[string]int{}, ended: map[string]bool{}, lastSince: map[string]int64{}}
			n := 1 + rng.Intn(4)
			for i := 0; i < n; i++ {
				args := fmt.Sprintf(`{"description":"job %d","prompt":"p","agent":"general"}`, i)
				if rng.Intn(2) == 0 {
					args = fmt.Sprintf(`{"description":"job %d","prompt":"p","agent":"general","timeout":%d}`, i, 2+rng.Intn(30))
				}
				w.step(Event{Type: EventToolCall, CallID: fmt.Sprint("call", i), Tool: ToolTask, SessionID: "ses_p", MessageID: "msg_1", Args: json.RawMessage(args)})
			}
			for _, id := range w.tasks {
				w.oc("session.status", fmt.Sprintf(`{"sessionID":%q,"status":{"type":"busy"}}`, id))
			}
			for i := 0; i < 60; i++ {
				w.act(warn)
			}
			// Whatever is still at work finishes, and the parent's last turn ends.
			for _, id := range w.tasks {
				w.complete(id)
			}
			w.oc("session.idle", `{"sessionID":"ses_p"}`)
			for _, id := range w.tasks {
				tk := w.m.task(id)
				if !tk.Status.Terminal() || tk.StalledSince != 0 {
					t.Fatalf("task %s: %s, stalled since %d", id, tk.Status, tk.StalledSince)
				}
				if w.finals[id] != 1 {
					t.Fatalf("task %s got %d final notices, want 1", id, w.finals[id])
				}
				if tk.Status == task.StatusError && tk.Error.Name != "Timeout" {
					t.Fatalf("task %s failed with %s", id, tk.Error.Name)
				}
				stalls += len(w.stallNotices[id])
			}
		})
	}
	if stalls == 0 {
		t.Fatal("no run saw a stall: the test tests nothing")
	}
}
