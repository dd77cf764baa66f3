package core

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// tmuxHarness drives a machine and answers the effects that need a reply as OpenCode would
// (agent list, session create/get, prompts, aborts), keeping every effect it saw.
type tmuxHarness struct {
	t       *testing.T
	m       *Machine
	now     int64
	nextSes int
	calls   int
	effects []Effect
}

func newTmuxHarness(t *testing.T, cfg config.Config) *tmuxHarness {
	return &tmuxHarness{t: t, m: NewMachine(cfg), now: 1_000_000}
}

func (h *tmuxHarness) step(ev Event) []Effect {
	h.now += 10
	var all []Effect
	queue := h.m.Step(h.now, ev)
	for len(queue) > 0 {
		e := queue[0]
		queue = queue[1:]
		all = append(all, e)
		h.effects = append(h.effects, e)
		done := func(result string) {
			queue = append(queue, h.m.Step(h.now, Event{Type: EventEffectDone, EffectID: e.ID, OK: true, Result: json.RawMessage(result)})...)
		}
		switch e.Kind {
		case EffectAgentsList:
			done(`[{"name":"build","mode":"primary"},{"name":"general","mode":"subagent"}]`)
		case EffectSessionCreate:
			h.nextSes++
			done(fmt.Sprintf(`{"id":"ses_c%d"}`, h.nextSes))
		case EffectSessionGet:
			done(fmt.Sprintf(`{"id":%q}`, e.SessionID))
		case EffectPromptAsync, EffectAbort:
			done(`null`)
		}
	}
	return all
}

func (h *tmuxHarness) call(tool, args string) []Effect {
	h.calls++
	return h.step(Event{Type: EventToolCall, CallID: fmt.Sprintf("call%d", h.calls), Tool: tool, SessionID: "ses_p", MessageID: "msg_p", Agent: "build", Args: json.RawMessage(args)})
}

// launch starts a task described desc and returns its ID.
func (h *tmuxHarness) launch(desc string) (string, []Effect) {
	eff := h.call(ToolTask, fmt.Sprintf(`{"description":%q,"prompt":"do it","agent":"general"}`, desc))
	for _, e := range eff {
		if e.Kind == EffectToolReply {
			return e.Metadata["taskId"].(string), eff
		}
	}
	h.t.Fatal("the launch was not answered")
	return "", nil
}

func (h *tmuxHarness) oc(typ, props string) []Effect {
	return h.step(Event{Type: EventOpenCode, Event: &OpenCodeEvent{Type: typ, Properties: json.RawMessage(props)}})
}

// answer has the child write one assistant message (an error when errJSON is set) and go idle.
func (h *tmuxHarness) answer(taskID, errJSON string) []Effect {
	id := mustTask(h.t, h.m, taskID).SessionID
	msgID := fmt.Sprintf("msg_%d", h.now)
	created := h.now + 1
	var all []Effect
	if errJSON != "" {
		all = append(all, h.oc("message.updated", fmt.Sprintf(`{"info":{"id":%q,"sessionID":%q,"role":"assistant","error":%s,"time":{"created":%d,"completed":%d}}}`, msgID, id, errJSON, created, created+1))...)
	} else {
		all = append(all, h.oc("message.part.updated", fmt.Sprintf(`{"part":{"id":"prt_%d","sessionID":%q,"messageID":%q,"type":"text","text":"done","time":{"end":%d}}}`, h.now, id, msgID, created+1))...)
		all = append(all, h.oc("message.updated", fmt.Sprintf(`{"info":{"id":%q,"sessionID":%q,"role":"assistant","finish":"stop","time":{"created":%d,"completed":%d}}}`, msgID, id, created, created+1))...)
	}
	return append(all, h.oc("session.idle", fmt.Sprintf(`{"sessionID":%q}`, id))...)
}

func (h *tmuxHarness) status(id string) task.Status {
	t, ok := h.m.Task(id)
	require.True(h.t, ok, "task %s", id)
	return t.Status
}

// tmuxEffects lists the tmux effects among effects as "open <task ID> <title>" / "close <task ID>".
func tmuxEffects(effects []Effect) []string {
	var out []string
	for _, e := range effects {
		switch e.Kind {
		case EffectTmuxOpen:
			out = append(out, fmt.Sprintf("open %s %s", e.TaskID, e.Title))
		case EffectTmuxClose:
			out = append(out, "close "+e.TaskID)
		}
	}
	return out
}

var tmuxOn = config.Config{Tmux: config.TmuxConfig{Enabled: true, Inside: true}}

// Panes open only when the user enabled them and OpenCode runs inside tmux.
func TestTmuxOnlyWhenEnabledAndInside(t *testing.T) {
	for _, cfg := range []config.TmuxConfig{{}, {Enabled: true}, {Inside: true}} {
		h := newTmuxHarness(t, config.Config{Tmux: cfg})
		id, _ := h.launch("survey")
		h.answer(id, "")
		require.Equal(t, task.StatusCompleted, h.status(id))
		require.Empty(t, tmuxEffects(h.effects), "tmux config %+v", cfg)
	}
}

// A running child gets one pane, titled with the task's description and opened with (after) its
// prompt; the pane closes when the task completes, and an answer seen twice closes nothing twice.
func TestTmuxOpenOnStartCloseOnComplete(t *testing.T) {
	h := newTmuxHarness(t, tmuxOn)
	id, eff := h.launch("Survey auth")
	require.Equal(t, []string{"open " + id + " Survey auth"}, tmuxEffects(eff))
	kinds := []string{}
	for _, e := range eff {
		kinds = append(kinds, e.Kind)
	}
	require.Less(t, indexOf(kinds, EffectPromptAsync), indexOf(kinds, EffectTmuxOpen), "the pane opens once the prompt is sent: %v", kinds)

	h.oc("session.status", fmt.Sprintf(`{"sessionID":%q,"status":{"type":"busy"}}`, id))
	eff = h.answer(id, "")
	require.Equal(t, task.StatusCompleted, h.status(id))
	require.Equal(t, []string{"close " + id}, tmuxEffects(eff))
	h.oc("session.idle", fmt.Sprintf(`{"sessionID":%q}`, id))
	require.Equal(t, []string{"open " + id + " Survey auth", "close " + id}, tmuxEffects(h.effects))
	for _, e := range h.effects {
		if e.Kind == EffectTmuxOpen || e.Kind == EffectTmuxClose {
			require.False(t, e.Reply, "%s wants no reply: a pane never holds up a task", e.Kind)
		}
	}
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// A queued task gets no pane while it waits; it gets one when a slot frees and it starts, after
// the finished task's pane closed.
func TestTmuxQueuedTaskOpensWhenItStarts(t *testing.T) {
	cfg := tmuxOn
	cfg.MaxConcurrentStarts = 1
	h := newTmuxHarness(t, cfg)
	first, _ := h.launch("first")
	second, eff := h.launch("second")
	require.True(t, mustTask(t, h.m, second).Queued)
	require.Empty(t, tmuxEffects(eff), "no pane for a queued task")
	require.Equal(t, []string{"open " + first + " first"}, tmuxEffects(h.effects))

	eff = h.answer(first, "")
	require.Equal(t, []string{"close " + first, "open " + second + " second"}, tmuxEffects(eff))
	eff = h.answer(second, "")
	require.Equal(t, []string{"close " + second}, tmuxEffects(eff))
}

func mustTask(t *testing.T, m *Machine, id string) task.Task {
	tk, ok := m.Task(id)
	require.True(t, ok)
	return tk
}

// The pane closes however the task ends: an error, a cancel; a queued task cancelled before it
// started never had a pane, so nothing is closed.
func TestTmuxCloseOnErrorAndCancel(t *testing.T) {
	cfg := tmuxOn
	cfg.MaxConcurrentStarts = 2
	h := newTmuxHarness(t, cfg)
	failing, _ := h.launch("failing")
	cancelled, _ := h.launch("cancelled")
	queued, _ := h.launch("queued")
	require.True(t, mustTask(t, h.m, queued).Queued)

	eff := h.answer(failing, `{"name":"APIError","data":{"message":"bad request","statusCode":400,"isRetryable":false}}`)
	require.Equal(t, task.StatusError, h.status(failing))
	require.Equal(t, []string{"close " + failing, "open " + queued + " queued"}, tmuxEffects(eff))

	eff = h.call(ToolCancel, fmt.Sprintf(`{"task_id":%q}`, cancelled))
	require.Equal(t, task.StatusCancelled, h.status(cancelled))
	require.Equal(t, []string{"close " + cancelled}, tmuxEffects(eff))

	// A fresh queued task, cancelled while it waits.
	h2 := newTmuxHarness(t, config.Config{Tmux: tmuxOn.Tmux, MaxConcurrentStarts: 1})
	h2.launch("runs")
	waiting, _ := h2.launch("waits")
	eff = h2.call(ToolCancel, fmt.Sprintf(`{"task_id":%q}`, waiting))
	require.Equal(t, task.StatusCancelled, h2.status(waiting))
	require.Empty(t, tmuxEffects(eff))
}

// A resumed task runs again in its session, so it gets a pane again for the resume, closed when
// the resume completes.
func TestTmuxResumeReopens(t *testing.T) {
	h := newTmuxHarness(t, tmuxOn)
	id, _ := h.launch("survey")
	h.answer(id, "")
	eff := h.call(ToolTask, fmt.Sprintf(`{"resume":%q,"prompt":"and more"}`, id))
	require.Equal(t, task.StatusResumed, h.status(id))
	require.Equal(t, []string{"open " + id + " survey"}, tmuxEffects(eff))
	eff = h.answer(id, "")
	require.Equal(t, task.StatusCompleted, h.status(id))
	require.Equal(t, []string{"close " + id}, tmuxEffects(eff))
}

// Deleting the parent takes its tasks along, and their panes.
func TestTmuxParentDeletedClosesPanes(t *testing.T) {
	h := newTmuxHarness(t, tmuxOn)
	running, _ := h.launch("running")
	done, _ := h.launch("done")
	h.answer(done, "")
	eff := h.oc("session.deleted", `{"info":{"id":"ses_p"}}`)
	require.Equal(t, []string{"close " + running}, tmuxEffects(eff))
	_, ok := h.m.Task(running)
	require.False(t, ok)
}
