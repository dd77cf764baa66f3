package core

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/httpapi"
	"github.com/asyncagents/asyncagents/core/task"
)

// world plays OpenCode around a Machine with a random scheduler: effect results, timer firings
// and the children's events arrive in random order, some idle events lost, some duplicated.
type world struct {
	t       *testing.T
	rng     *rand.Rand
	m       *Machine
	now     int64
	queue   []Event // deliveries waiting, picked at random
	timers  map[string]bool
	created int
	done    map[string]bool // children that finished their turn
	tasks   int
	notices map[string][]string // task ID -> visible notice texts
	cancels bool                // the parent cancels tasks at random, by either ID
	// failCreates: OpenCode refuses some session.create calls; deleted lists the sessions the
	// core deleted (created for a task cancelled meanwhile), prompted the sessions prompted.
	failCreates bool
	deleted     map[string]bool
	prompted    map[string]bool
	// creates maps a session.create's effect ID to the session it will name and its task; late
	// lists the sessions that arrived for a task already ended (cancelled meanwhile).
	creates map[int64][2]string
	late    map[string]bool
	settled bool // the parent's final idle was sent
}

var (
	progressLine = regexp.MustCompile(`Task Progress: (\d+)/(\d+)$`)
	taskIDIn     = regexp.MustCompile(`(?m)^task_id: (\S+)$`)
)

func (w *world) carryOut(effects []Effect) {
	w.checkView()
	for _, e := range effects {
		if e.SessionID != "" && e.SessionID != "ses_parent" && e.Kind != EffectSessionDelete && w.m.task(e.SessionID) == nil {
			w.t.Fatalf("effect %s refers to unknown session %q", e.Kind, e.SessionID)
		}
		switch e.Kind {
		case EffectAgentsList:
			w.queue = append(w.queue, Event{Type: EventEffectDone, EffectID: e.ID, OK: true,
				Result: json.RawMessage(`[{"name":"build","mode":"primary"},{"name":"general","mode":"subagent"}]`)})
		case EffectSessionCreate:
			if w.failCreates && w.rng.Intn(3) == 0 {
				w.queue = append(w.queue, Event{Type: EventEffectDone, EffectID: e.ID, OK: false, Error: "creating the session: 500"})
				continue
			}
			w.created++
			w.creates[e.ID] = [2]string{fmt.Sprintf("ses_%d", w.created), e.TaskID}
			w.queue = append(w.queue, Event{Type: EventEffectDone, EffectID: e.ID, OK: true, Result: json.RawMessage(fmt.Sprintf(`{"id":"ses_%d"}`, w.created))})
		case EffectSessionDelete:
			w.deleted[e.SessionID] = true
			w.queue = append(w.queue, Event{Type: EventEffectDone, EffectID: e.ID, OK: true})
		case EffectPromptAsync:
			if e.SessionID == "ses_parent" {
				for _, n := range splitNotices(e) {
					id := taskIDIn.FindStringSubmatch(n.Parts[1].Text)[1]
					w.notices[id] = append(w.notices[id], n.Parts[0].Text)
				}
			} else {
				w.prompted[e.SessionID] = true
				w.scheduleChild(e.SessionID)
			}
			w.queue = append(w.queue, Event{Type: EventEffectDone, EffectID: e.ID, OK: true})
		case EffectMessages:
			w.queue = append(w.queue, Event{Type: EventEffectDone, EffectID: e.ID, OK: true, Result: w.messages(e.SessionID)})
		case EffectStatus:
			busy := map[string]any{}
			for _, tk := range w.m.tasks {
				if tk.SessionID != "" && !w.done[tk.SessionID] {
					busy[tk.SessionID] = map[string]string{"type": "busy"}
				}
			}
			b, _ := json.Marshal(busy)
			w.queue = append(w.queue, Event{Type: EventEffectDone, EffectID: e.ID, OK: true, Result: b})
		case EffectTimerSet:
			if e.TimerID != HeartbeatTimer { // it re-arms forever: not part of settling
				w.timers[e.TimerID] = true
			}
		case EffectTimerClear:
			delete(w.timers, e.TimerID)
		case EffectToolReply:
			if e.Error != "" && !strings.HasPrefix(e.CallID, "cancel") {
				w.t.Fatalf("launch failed: %s", e.Error)
			}
		case EffectAbort:
			w.queue = append(w.queue, Event{Type: EventEffectDone, EffectID: e.ID, OK: true})
		}
	}
}

// scheduleChild queues the child's end of turn: its events, each possibly lost or repeated.
func (w *world) scheduleChild(id string) {
	w.queue = append(w.queue, Event{Type: "child.finish", SessionID: id})
}

func (w *world) finishChild(id string) {
	w.done[id] = true
	maybe := func(n int, ev Event) {
		for i := 0; i < n; i++ {
			w.queue = append(w.queue, ev)
		}
	}
	oc := func(typ, props string) Event {
		return Event{Type: EventOpenCode, Event: &OpenCodeEvent{Type: typ, Properties: json.RawMessage(props)}}
	}
	maybe(w.rng.Intn(3), oc("message.part.updated", fmt.Sprintf(`{"part":{"id":"p_%s","sessionID":%q,"messageID":"a_%s","type":"tool","callID":"c_%s","tool":"read"}}`, id, id, id, id)))
	maybe(w.rng.Intn(2), oc("message.updated", fmt.Sprintf(`{"info":{"id":"a_%s","sessionID":%q,"role":"assistant","finish":"stop","time":{"created":1,"completed":2}}}`, id, id)))
	maybe(w.rng.Intn(2), oc("message.part.updated", fmt.Sprintf(`{"part":{"id":"t_%s","sessionID":%q,"messageID":"a_%s","type":"text","text":"result of %s","time":{"start":1,"end":2}}}`, id, id, id, id)))
	maybe(w.rng.Intn(3), oc("session.idle", fmt.Sprintf(`{"sessionID":%q}`, id)))                            // lost, once or twice
	maybe(w.rng.Intn(2), oc("session.status", fmt.Sprintf(`{"sessionID":%q,"status":{"type":"idle"}}`, id))) // maybe
}

func (w *world) messages(id string) json.RawMessage {
	if !w.done[id] {
		return json.RawMessage(`[{"info":{"id":"u","role":"user"},"parts":[]}]`)
	}
	return json.RawMessage(fmt.Sprintf(`[{"info":{"id":"u","role":"user"},"parts":[]},{"info":{"id":"a_%s","role":"assistant","finish":"stop","time":{"created":1,"completed":2}},"parts":[{"type":"text","text":"result of %s"}]}]`, id, id))
}

func (w *world) run() {
	for step := 0; step < 5000; step++ {
		w.now += int64(w.rng.Intn(400))
		if len(w.queue) == 0 {
			// Nothing else happens: time passes and the armed timers fire.
			if len(w.timers) == 0 {
				if w.settled {
					return
				}
				// The parent's last turn ends: whatever notice was held goes out.
				w.settled = true
				w.carryOut(w.m.Step(w.now, Event{Type: EventOpenCode, Event: &OpenCodeEvent{Type: "session.idle", Properties: json.RawMessage(`{"sessionID":"ses_parent"}`)}}))
				continue
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
		// The parent's own life goes on: it gets busy and idle, and sometimes cancels a task.
		switch w.rng.Intn(12) {
		case 0:
			w.carryOut(w.m.Step(w.now, Event{Type: EventOpenCode, Event: &OpenCodeEvent{Type: "session.idle", Properties: json.RawMessage(`{"sessionID":"ses_parent"}`)}}))
		case 1:
			w.carryOut(w.m.Step(w.now, Event{Type: EventOpenCode, Event: &OpenCodeEvent{Type: "session.status", Properties: json.RawMessage(`{"sessionID":"ses_parent","status":{"type":"busy"}}`)}}))
		case 2:
			// By the session's ID, or by the task's own, which a task has before its session.
			if w.cancels && w.rng.Intn(2) == 0 && w.created > 0 {
				id := fmt.Sprintf("ses_%d", 1+w.rng.Intn(w.created))
				w.carryOut(w.m.Step(w.now, Event{Type: EventToolCall, CallID: "cancel" + id, Tool: ToolCancel, SessionID: "ses_parent", Args: json.RawMessage(fmt.Sprintf(`{"task_id":%q}`, id))}))
			} else if w.cancels && len(w.m.order) > 0 {
				id := w.m.order[w.rng.Intn(len(w.m.order))]
				w.carryOut(w.m.Step(w.now, Event{Type: EventToolCall, CallID: "cancel" + id, Tool: ToolCancel, SessionID: "ses_parent", Args: json.RawMessage(fmt.Sprintf(`{"task_id":%q}`, id))}))
			}
		}
		i := w.rng.Intn(len(w.queue))
		ev := w.queue[i]
		w.queue = append(w.queue[:i], w.queue[i+1:]...)
		if ev.Type == "child.finish" {
			w.finishChild(ev.SessionID)
			continue
		}
		if c, ok := w.creates[ev.EffectID]; ok && ev.Type == EventEffectDone && ev.OK {
			if tk := w.m.tasks[c[1]]; tk != nil && tk.Status.Terminal() {
				w.late[c[0]] = true
			}
		}
		w.carryOut(w.m.Step(w.now, ev))
	}
	w.t.Fatal("the world did not settle in 5000 steps")
}

// TestReducerUnderRandomEventOrders checks the invariants that must hold whatever order events
// come in: every task ends once its child is idle (or is cancelled, racing its completion or its
// session's creation, or fails because OpenCode refused its session), each gets exactly one notice, the batch's Task Progress counts add up, no task is left queued, and
// no effect names an unknown task. The start queue's size and the parent's busy spells vary too.
func TestReducerUnderRandomEventOrders(t *testing.T) {
	for seed := int64(1); seed <= 300; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			cfg := config.Config{MaxConcurrentStarts: 1 + rng.Intn(6)}
			w := &world{t: t, rng: rng, m: NewMachine(cfg), timers: map[string]bool{}, done: map[string]bool{}, notices: map[string][]string{},
				cancels: seed%3 == 0, failCreates: seed%4 == 1, deleted: map[string]bool{}, prompted: map[string]bool{},
				creates: map[int64][2]string{}, late: map[string]bool{}}
			if rng.Intn(2) == 0 {
				w.carryOut(w.m.Step(0, Event{Type: EventStart}))
			}
			w.tasks = 1 + rng.Intn(6)
			for i := 0; i < w.tasks; i++ {
				args := fmt.Sprintf(`{"description":"job %d","prompt":"p","agent":"general"}`, i)
				w.carryOut(w.m.Step(w.now, Event{Type: EventToolCall, CallID: fmt.Sprint("call", i), Tool: ToolTask, SessionID: "ses_parent", MessageID: "msg_1", Args: json.RawMessage(args)}))
			}
			w.run()

			if len(w.m.tasks) != w.tasks {
				t.Fatalf("%d tasks, want %d", len(w.m.tasks), w.tasks)
			}
			var progress []string
			for id, tk := range w.m.tasks {
				switch {
				case tk.Status == task.StatusCancelled && w.cancels:
				case tk.Status == task.StatusError && w.failCreates && tk.SessionID == "" && tk.Error.Name == "SessionError":
					// OpenCode refused its session: failed, with a notice, never stuck
				case tk.Status != task.StatusCompleted:
					t.Fatalf("task %s ended %s, want completed", id, tk.Status)
				case tk.Result != "result of "+tk.SessionID:
					t.Fatalf("task %s result %q", id, tk.Result)
				}
				if tk.Queued {
					t.Fatalf("task %s still queued", id)
				}
				if n := len(w.notices[id]); n != 1 {
					t.Fatalf("task %s got %d notices, want 1: %q", id, n, w.notices[id])
				}
				m := progressLine.FindStringSubmatch(w.notices[id][0])
				if m == nil || m[2] != fmt.Sprint(w.tasks) {
					t.Fatalf("notice %q: want Task Progress k/%d", w.notices[id][0], w.tasks)
				}
				progress = append(progress, m[1])
			}
			sort.Slice(progress, func(i, j int) bool { return len(progress[i]) < len(progress[j]) || progress[i] < progress[j] })
			for i, p := range progress {
				if p != fmt.Sprint(i+1) {
					t.Fatalf("progress counts %v, want 1..%d each once", progress, w.tasks)
				}
			}
			if len(w.m.pending) != 0 {
				t.Fatalf("%d effects still pending after the world settled", len(w.m.pending))
			}
			// A session created for a task cancelled meanwhile is deleted, never prompted, and
			// no task holds it.
			for ses := range w.late {
				if !w.deleted[ses] || w.prompted[ses] || w.m.task(ses) != nil {
					t.Fatalf("session %s arrived for an ended task: deleted %v, prompted %v, held %v", ses, w.deleted[ses], w.prompted[ses], w.m.task(ses) != nil)
				}
			}
		})
	}
}

// checkView fails when the status API's cached view of the store differs from the store itself:
// a change to the store's membership or order that forgot storeChanged.
func (w *world) checkView() {
	cached, fresh := w.m.apiView(), w.m.freshView()
	if len(cached) != len(fresh) {
		w.t.Fatalf("the API's view holds %d tasks, the store %d", len(cached), len(fresh))
	}
	records := w.m.apiTasks()
	if len(records) != len(fresh) {
		w.t.Fatalf("the API's records hold %d tasks, the store %d", len(records), len(fresh))
	}
	freshRecords := make([]*task.Task, len(fresh))
	for i := range fresh {
		if cached[i] != fresh[i] {
			w.t.Fatalf("the API's view differs from the store at %d: %s, want %s", i, cached[i].ID, fresh[i].ID)
		}
		if freshRecords[i] = &fresh[i].Task; records[i] != freshRecords[i] {
			w.t.Fatalf("the API's records differ from the store at %d: %s, want %s", i, records[i].ID, fresh[i].ID)
		}
	}
	// A task read answered from the cache is the answer the store gives now.
	cfg := config.APIConfig{Auth: "none"}
	for _, target := range []string{"/v1/tasks", "/v1/tasks?status=running", "/v1/tasks/ses_1"} {
		path, query, _ := strings.Cut(target, "?")
		req := httpapi.Request{Method: "GET", Path: path, Query: query, Headers: map[string]string{"host": "127.0.0.1"}}
		got, want := w.m.ServeHTTP(req, cfg, w.now), httpapi.Serve(req, freshRecords, cfg, w.now)
		if got.Status != want.Status || got.Body != want.Body {
			w.t.Fatalf("GET %s answered %d %s from the cache; the store says %d %s", target, got.Status, got.Body, want.Status, want.Body)
		}
	}
}
