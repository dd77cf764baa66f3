package core

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

// crashWorld plays OpenCode and a host around a machine, one action at a time (an effect carried
// out, an event delivered, a timer fired), and can crash between any two: the machine and what it
// had in flight are dropped, and a fresh one is restored from the history lines written so far.
// OpenCode outlives the crash, as it does when only the plugin's process (or its core) dies, and
// as the parent's stored messages do when OpenCode itself restarts.
type crashWorld struct {
	t      *testing.T
	m      *Machine
	now    int64
	hist   strings.Builder
	todo   []Effect // effects the host has yet to carry out, one an action, in order
	queue  []Event  // then OpenCode's answers and events, oldest first
	timers map[string]bool
	// parent is the parent's conversation; wokeBy the notices' tasks, by message, whose message
	// asked for a model turn.
	parent []json.RawMessage
	wokeBy map[string]bool
	// refuse is how many of the parent's next notices OpenCode refuses; storeRefused: it stores
	// them all the same (the answer lost, not the message).
	refuse       int
	storeRefused bool
	created      int
	// actions counts what the host did since the first task's "completed" reached the history;
	// crashed says the world stopped there.
	actions            int
	completed, crashed bool
	// parentBusy: the parent's turn goes on until nothing else is left to happen.
	parentBusy bool
	// retries are the delays of the notice retries' timers; logs the log lines, level first.
	retries []int64
	logs    []string
}

func newCrashWorld(t *testing.T) *crashWorld {
	return &crashWorld{t: t, timers: map[string]bool{}, wokeBy: map[string]bool{}}
}

func (w *crashWorld) step(ev Event) {
	w.now += 10
	w.todo = append(w.todo, w.m.Step(w.now, ev)...)
}

func (w *crashWorld) oc(typ, props string) {
	w.step(Event{Type: EventOpenCode, Event: &OpenCodeEvent{Type: typ, Properties: json.RawMessage(props)}})
}

// carryOut does what a host does with effects, in order: writes the history, asks OpenCode, whose
// answers are queued.
func (w *crashWorld) carryOut(effects ...Effect) {
	for _, e := range effects {
		switch e.Kind {
		case EffectHistoryAppend:
			w.hist.WriteString(e.Line)
			if strings.Contains(e.Line, `"status":"completed"`) {
				w.completed = true
			}
		case EffectHistoryRewrite:
			w.hist.Reset()
			w.hist.WriteString(e.Content)
		case EffectAgentsList:
			w.reply(e, true, `[{"name":"build","mode":"primary"},{"name":"general","mode":"subagent"}]`)
		case EffectSessionCreate:
			w.created++
			w.reply(e, true, fmt.Sprintf(`{"id":"ses_c%d"}`, w.created))
		case EffectPromptAsync:
			if e.SessionID != "ses_p" {
				w.reply(e, true, "")
				// The child answers, then goes idle.
				w.queue = append(w.queue, Event{Type: EventOpenCode, Event: &OpenCodeEvent{Type: "session.idle", Properties: json.RawMessage(fmt.Sprintf(`{"sessionID":%q}`, e.SessionID))}})
				continue
			}
			if w.refuse > 0 {
				w.refuse--
				if w.storeRefused {
					w.store(e)
				}
				w.queue = append(w.queue, Event{Type: EventEffectDone, EffectID: e.ID, OK: false, Error: "prompting the session: 500"})
				continue
			}
			// OpenCode stores the message at once; its answer reaches the core later.
			w.store(e)
			w.reply(e, true, "")
		case EffectMessages:
			if e.SessionID == "ses_p" {
				b, _ := json.Marshal(w.parent)
				w.reply(e, true, string(b))
				continue
			}
			w.reply(e, true, fmt.Sprintf(`[{"info":{"id":"u","role":"user","time":{"created":1}},"parts":[{"type":"text","text":"do"}]},{"info":{"id":"a","role":"assistant","finish":"stop","time":{"created":2,"completed":3}},"parts":[{"type":"text","text":"answer of %s"}]}]`, e.SessionID))
		case EffectStatus:
			w.reply(e, true, `{}`) // no child is busy: they all answered
		case EffectLog:
			w.logs = append(w.logs, e.Level+": "+e.Message)
		case EffectTimerSet:
			if strings.HasPrefix(e.TimerID, noticeRetryPrefix) {
				w.retries = append(w.retries, e.DelayMs)
			}
			if e.TimerID != HeartbeatTimer && e.TimerID != pollTimer {
				w.timers[e.TimerID] = true
			}
		case EffectTimerClear:
			delete(w.timers, e.TimerID)
		default:
			if e.Reply {
				w.reply(e, true, "")
			}
		}
	}
}

// store puts a notice in the parent's conversation, as OpenCode does on prompt_async.
func (w *crashWorld) store(e Effect) {
	w.parent = append(w.parent, noticeMessage(len(w.parent), w.now, e))
	for _, id := range splitNotices(e) {
		w.wokeBy[id.TaskID] = w.wokeBy[id.TaskID] || !e.NoReply
	}
}

func (w *crashWorld) reply(e Effect, ok bool, result string) {
	ev := Event{Type: EventEffectDone, EffectID: e.ID, OK: ok}
	if result != "" {
		ev.Result = json.RawMessage(result)
	}
	w.queue = append(w.queue, ev)
}

// noticeMessage is the parent's message a notice becomes: a user message with its parts.
func noticeMessage(n int, now int64, e Effect) json.RawMessage {
	msg := map[string]any{
		"info":  map[string]any{"id": fmt.Sprintf("msg_%03d", n), "role": "user", "time": map[string]int64{"created": now}},
		"parts": e.Parts,
	}
	b, _ := json.Marshal(msg)
	return b
}

// act does the host's next action: deliver the oldest event, or, with none, fire the armed
// timers. It reports false when nothing is left to do. crashAt >= 0 stops the world (false) once
// that many actions were done since the completion was written.
func (w *crashWorld) act(crashAt int) bool {
	if w.completed {
		if w.actions == crashAt {
			w.crashed = true
			return false
		}
		w.actions++
	}
	if len(w.todo) > 0 {
		e := w.todo[0]
		w.todo = w.todo[1:]
		w.carryOut(e)
		return true
	}
	if len(w.queue) > 0 {
		ev := w.queue[0]
		w.queue = w.queue[1:]
		w.step(ev)
		return true
	}
	if len(w.timers) == 0 {
		if w.parentBusy {
			w.parentBusy = false
			w.oc("session.idle", `{"sessionID":"ses_p"}`)
			return true
		}
		return false
	}
	ids := make([]string, 0, len(w.timers))
	for id := range w.timers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	delete(w.timers, ids[0])
	w.now += noticeRetryMaxMs
	w.todo = append(w.todo, w.m.Step(w.now, Event{Type: EventTimer, TimerID: ids[0]})...)
	return true
}

func (w *crashWorld) settle(crashAt int) {
	for i := 0; i < 1000; i++ {
		if !w.act(crashAt) {
			return
		}
	}
	w.t.Fatal("the world did not settle in 1000 actions")
}

// restart drops the machine and all it had in flight (answers, timers), and restores a fresh one
// from the history written so far.
func (w *crashWorld) restart() {
	w.todo, w.queue, w.timers = nil, nil, map[string]bool{}
	w.m = NewMachine(config.Config{})
	w.now += 1000
	_, effects := w.m.Restore(w.now, w.hist.String())
	w.todo = effects
}

// noticesOf counts the parent's messages that tell of task id.
func (w *crashWorld) noticesOf(id string) int {
	n := 0
	for _, raw := range w.parent {
		if strings.Contains(string(raw), "task_id: "+id+`\n`) {
			n++
		}
	}
	return n
}

// crashScenario is one run: tasks launched in one batch, the parent busy or idle when they
// finish, OpenCode refusing the first notices or not; crashAt < 0 never crashes.
type crashScenario struct {
	tasks        int
	parentBusy   bool
	refuse       int
	storeRefused bool
}

// play runs s, crashing after crashAt actions past the first completion (never if negative),
// restoring and playing on to the end. It returns the world and whether the crash came.
func (s crashScenario) play(t *testing.T, crashAt int) (*crashWorld, bool) {
	w := newCrashWorld(t)
	w.m = NewMachine(config.Config{})
	w.refuse, w.storeRefused = s.refuse, s.storeRefused
	for i := 1; i <= s.tasks; i++ {
		w.step(Event{Type: EventToolCall, CallID: fmt.Sprintf("c%d", i), Tool: ToolTask, SessionID: "ses_p", MessageID: "m1", Agent: "build",
			Args: json.RawMessage(fmt.Sprintf(`{"description":"Job %d","prompt":"do %d","agent":"general"}`, i, i))})
	}
	if s.parentBusy {
		w.parentBusy = true
		w.oc("session.status", `{"sessionID":"ses_p","status":{"type":"busy"}}`)
	} else {
		w.oc("session.idle", `{"sessionID":"ses_p"}`)
	}
	w.settle(crashAt)
	if w.crashed {
		// After the restart the new core knows nothing of the parent's turn: it takes the
		// parent for idle until OpenCode says otherwise.
		w.restart()
		w.settle(-1)
	}
	return w, w.crashed
}

// TestOutboxCrashAtEveryStepDeliversOnce crashes between every two actions from a task's
// "completed" reaching the history to its notice's acceptance reaching it (the host writing a
// line, OpenCode storing the notice, its answer coming back, a refusal, a retry's timer, the
// parent going idle), restores a fresh machine from the lines written so far and plays on. The
// parent always gets exactly one notice of each task, a batch's last one wakes it, and the
// history ends with no notice owed.
func TestOutboxCrashAtEveryStepDeliversOnce(t *testing.T) {
	for _, s := range []crashScenario{
		{tasks: 1},
		{tasks: 1, parentBusy: true},
		{tasks: 1, refuse: 2},
		{tasks: 2},
		{tasks: 2, parentBusy: true, refuse: 1},
		{tasks: 2, refuse: 2, storeRefused: true},
	} {
		t.Run(fmt.Sprintf("tasks=%d,busy=%v,refuse=%d,stored=%v", s.tasks, s.parentBusy, s.refuse, s.storeRefused), func(t *testing.T) {
			whole, _ := s.play(t, -1)
			total := whole.actions
			require.Greater(t, total, 2, "the run has steps to crash between")
			crashes := 0
			for crashAt := 0; crashAt <= total; crashAt++ {
				w, crashed := s.play(t, crashAt)
				if crashed {
					crashes++
				}
				ids := w.m.order
				require.Len(t, ids, s.tasks, "crash at %d", crashAt)
				for i, id := range ids {
					require.Equal(t, 1, w.noticesOf(id), "crash at %d: task %s's notices in the parent", crashAt, id)
					if i == len(ids)-1 {
						require.True(t, w.wokeBy[id], "crash at %d: the batch's last notice wakes the parent", crashAt)
					}
				}
				// The history says every notice was accepted.
				after := NewMachine(config.Config{})
				after.Restore(w.now, w.hist.String())
				for _, id := range ids {
					tk, ok := after.Task(id)
					require.True(t, ok)
					require.Equal(t, task.StatusCompleted, tk.Status)
					require.Zero(t, tk.NoticeOwed, "crash at %d: task %s's notice still owed in the history", crashAt, id)
					require.NotZero(t, tk.NotifiedAt, "crash at %d", crashAt)
				}
			}
			require.Greater(t, crashes, total/2, "most crash points fell inside the run")
			t.Logf("%d crash points, %d of them before the run's end", total+1, crashes)
		})
	}
}
