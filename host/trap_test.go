package host_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/host"
	"github.com/asyncagents/asyncagents/internal/wasmbuild"
)

// trapHost plays OpenCode and the history file for an instance of the testtraps module: it keeps
// the history lines the core asks to append, and answers every effect as OpenCode would for one
// child, ses_child, that is busy until told otherwise.
type trapHost struct {
	t       *testing.T
	c       *host.Core
	now     int64
	history strings.Builder
	logs    []string
	sent    []core.Effect // every effect carried out, in order
	done    bool          // the child has its answer
}

var trapModule *host.Module

func newTrapHost(t *testing.T) *trapHost {
	t.Helper()
	ctx := context.Background()
	if trapModule == nil {
		m, err := host.CompileFile(ctx, wasmbuild.BuildTestTraps(t))
		require.NoError(t, err)
		trapModule = m
	}
	c, err := trapModule.New(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close(ctx) })
	h := &trapHost{t: t, c: c, now: 1_000}
	_, err = c.Init(ctx, config.Config{})
	require.NoError(t, err)
	c.OnTrap(host.Recovery{
		Source:  func() ([]byte, []byte, string, error) { return nil, []byte(h.history.String()), "", nil },
		Effects: func(ctx context.Context, effects []core.Effect) { h.carryOut(effects) },
		Log:     func(m string) { h.logs = append(h.logs, m) },
	})
	return h
}

// step feeds one event and carries out what the core answers; it returns the core's error.
func (h *trapHost) step(ev core.Event) error {
	h.now += 10
	effects, err := h.c.Step(context.Background(), h.now, ev)
	h.carryOut(effects)
	return err
}

func (h *trapHost) carryOut(effects []core.Effect) {
	for _, e := range effects {
		h.sent = append(h.sent, e)
		if e.Kind == core.EffectHistoryAppend {
			h.history.WriteString(e.Line)
		}
		if !e.Reply {
			continue
		}
		var result string
		switch e.Kind {
		case core.EffectAgentsList:
			result = `[{"name":"build","mode":"primary"},{"name":"general","mode":"subagent"}]`
		case core.EffectSessionCreate:
			result = `{"id":"ses_child"}`
		case core.EffectStatus:
			result = `{"ses_child":{"type":"busy"}}`
			if h.done {
				result = `{}`
			}
		case core.EffectMessages:
			result = `[{"info":{"id":"u","role":"user","time":{"created":1}},"parts":[{"type":"text","text":"p"}]}]`
			if h.done {
				result = `[{"info":{"id":"u","role":"user","time":{"created":1}},"parts":[{"type":"text","text":"p"}]},` +
					`{"info":{"id":"a","role":"assistant","finish":"stop","time":{"created":2,"completed":3}},"parts":[{"type":"text","text":"the answer"}]}]`
			}
		}
		var res json.RawMessage
		if result != "" {
			res = json.RawMessage(result)
		}
		require.NoError(h.t, h.step(core.Event{Type: core.EventEffectDone, EffectID: e.ID, OK: true, Result: res}))
	}
}

func (h *trapHost) trapCall(kind string) error {
	return h.step(core.Event{Type: core.EventToolCall, CallID: "trap-" + kind, Tool: core.ToolCancel, SessionID: "ses_parent",
		MessageID: "msg_2", Agent: "build", Args: json.RawMessage(`{"task_id":"asyncagents-test-trap:` + kind + `"}`)})
}

func (h *trapHost) notices() []core.Effect {
	var out []core.Effect
	for _, e := range h.sent {
		if e.Kind == core.EffectPromptAsync && e.SessionID == "ses_parent" {
			out = append(out, e)
		}
	}
	return out
}

// A real trap in the middle of a task costs the call that trapped, not the session: the call
// fails with the core's words, a new instance is restored from the history, and the child that
// was running still brings its notice to the parent.
func TestATrapCostsOneCallAndTheRunningChildStillNotifies(t *testing.T) {
	ctx := context.Background()
	h := newTrapHost(t)
	require.NoError(t, h.step(core.Event{Type: core.EventToolCall, CallID: "c1", Tool: core.ToolTask, SessionID: "ses_parent",
		MessageID: "msg_1", Agent: "build", Args: json.RawMessage(`{"description":"Job","prompt":"p","agent":"general"}`)}))
	tasks, err := h.c.Tasks(ctx)
	require.NoError(t, err)
	require.Len(t, tasks, 1)
	require.Equal(t, "ses_child", tasks[0].SessionID)
	id := tasks[0].ID

	err = h.trapCall("memory")
	require.ErrorContains(t, err, "its core failed on this call")
	require.ErrorContains(t, err, "out of bounds memory access")
	require.Len(t, h.logs, 2)
	require.Contains(t, h.logs[0], "the core trapped")
	require.Empty(t, h.c.Halted())

	// The new instance restored the task, asked OpenCode which children are busy, and tracks it.
	after, err := h.c.Tasks(ctx)
	require.NoError(t, err)
	require.Len(t, after, 1)
	require.Equal(t, id, after[0].ID)
	require.Equal(t, task.StatusRunning, after[0].Status)
	require.Empty(t, h.notices())

	h.done = true
	require.NoError(t, h.step(core.Event{Type: core.EventOpenCode, Event: &core.OpenCodeEvent{Type: "session.idle", Properties: json.RawMessage(`{"sessionID":"ses_child"}`)}}))
	notices := h.notices()
	require.Len(t, notices, 1)
	require.Contains(t, notices[0].Parts[1].Text, "<task_result>\nthe answer\n</task_result>")
	require.Contains(t, notices[0].Parts[1].Text, "task_id: "+id)
}

// Three traps within a minute are a loop: the third call fails with the core's "stopped" text,
// and so does every call after it, without another try. An unrecovered panic traps as well.
func TestATrapLoopStops(t *testing.T) {
	ctx := context.Background()
	h := newTrapHost(t)
	require.ErrorContains(t, h.trapCall("panic"), "its core failed on this call")
	require.ErrorContains(t, h.trapCall("panic"), "its core failed on this call")
	err := h.trapCall("memory")
	require.ErrorContains(t, err, "asyncagents stopped: its core failed 3 times within a minute")
	require.Equal(t, err.Error(), h.c.Halted())
	_, later := h.c.Tasks(ctx)
	require.EqualError(t, later, err.Error())
	require.Contains(t, h.logs[len(h.logs)-1], "asyncagents stopped")
}

// The shipped module has no trap on purpose: the same call is an ordinary unknown task.
func TestTheShippedModuleDoesNotTrapOnTheTestMarker(t *testing.T) {
	inst := openInstance(t)
	effects, err := inst.Step(context.Background(), 1, core.Event{Type: core.EventToolCall, CallID: "c", Tool: core.ToolCancel,
		Args: json.RawMessage(`{"task_id":"asyncagents-test-trap:memory"}`)})
	require.NoError(t, err)
	require.Len(t, effects, 1)
	require.Contains(t, effects[0].Error, "asyncagents-test-trap:memory")
}
