package core

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// writeProgress fires the progress timer: the progress held is written.
func (h *fbHarness) writeProgress() []Effect {
	return h.step(Event{Type: EventTimer, TimerID: ProgressTimer})
}

// progressTimers counts the progress timer's settings among effects.
func progressTimers(effects []Effect) int {
	n := 0
	for _, e := range ofKind(effects, EffectTimerSet) {
		if e.TimerID == ProgressTimer {
			n++
		}
	}
	return n
}

// A child's progress is shown on the event streams in its step and written to the history once,
// when the progress timer fires, however many changes came before it; a timer with nothing held
// writes nothing.
func TestProgressIsWrittenLateAndOnce(t *testing.T) {
	h := newFB(t, config.Config{})
	id := h.launch()
	h.busy(id)
	from := len(h.effects)
	h.tool(id, "call_1", "read", "running", "a.go")
	first := h.effects[from:]
	require.Empty(t, ofKind(first, EffectHistoryAppend), "progress is not written in its step")
	require.Len(t, ofKind(first, EffectSSEBroadcast), 1, "the event streams see it at once")
	require.Equal(t, 1, progressTimers(first))
	armed := len(h.effects)
	h.tool(id, "call_2", "grep", "running", "auth")
	h.work(id, "msg_a", "prt_a", "looked around", true)
	require.Empty(t, ofKind(h.effects[armed:], EffectHistoryAppend))
	require.Zero(t, progressTimers(h.effects[armed:]), "one timer for all the progress held")

	written := h.writeProgress()
	require.Empty(t, ofKind(written, EffectSSEBroadcast), "the streams had each change already")
	lines := ofKind(written, EffectHistoryAppend)
	require.Len(t, lines, 1)
	require.Contains(t, lines[0].Line, `"toolCalls":2`)
	require.Contains(t, lines[0].Line, `"text":"looked around"`)
	require.Empty(t, ofKind(h.writeProgress(), EffectHistoryAppend), "nothing held, nothing written")
	require.Equal(t, 1, progressTimers(h.tool2(id, "call_3", "read")), "new progress sets the timer again")
}

// tool2 is tool returning the effects of the part's event.
func (h *fbHarness) tool2(id, callID, name string) []Effect {
	from := len(h.effects)
	h.tool(id, callID, name, "running", "")
	return h.effects[from:]
}

// A change of any other kind writes the task whole, its progress with it: the result's line
// holds the work before it, and the timer then has nothing left to write. A step whose own change
// takes the progress with it sets no timer.
func TestAResultWritesTheProgressHeld(t *testing.T) {
	h := newFB(t, config.Config{})
	id := h.launch()
	h.busy(id)
	h.tool(id, "call_1", "read", "completed", "a.go")
	from := len(h.effects)
	h.answer(id, "", "found it")
	lines := ofKind(h.effects[from:], EffectHistoryAppend)
	require.NotEmpty(t, lines)
	require.Contains(t, lines[0].Line, `"status":"completed"`)
	require.Contains(t, lines[0].Line, `"tools":[{"name":"read","title":"a.go"}]`)
	require.Empty(t, ofKind(h.writeProgress(), EffectHistoryAppend))

	h2 := newFB(t, config.Config{})
	id2 := h2.launch()
	h2.busy(id2)
	// A text part that ends in the same step as the child's end (a worker's batch): written with
	// the end, no timer.
	ev := func(typ, props string) OpenCodeEvent {
		return OpenCodeEvent{Type: typ, Properties: json.RawMessage(props)}
	}
	eff := h2.step(Event{Type: EventOpenCode, Events: []OpenCodeEvent{
		ev("message.part.updated", fmt.Sprintf(`{"part":{"id":"prt_1","sessionID":%q,"messageID":"msg_1","type":"text","text":"at once","time":{"end":5}}}`, id2)),
		ev("message.updated", fmt.Sprintf(`{"info":{"id":"msg_1","sessionID":%q,"role":"assistant","finish":"stop","time":{"created":4,"completed":5}}}`, id2)),
		ev("session.idle", fmt.Sprintf(`{"sessionID":%q}`, id2)),
	}})
	tk, _ := h2.m.Task(id2)
	require.Equal(t, task.StatusCompleted, tk.Status)
	require.NotEmpty(t, ofKind(eff, EffectHistoryAppend))
	require.Zero(t, progressTimers(eff))
}

// What a crash before the timer loses is the progress held, never a result, and a restart reads
// a record whole: the tool seen before the last write is there, the one after it is not, and
// the task is still the running one the parent was told of.
func TestACrashLosesOnlyTheProgressHeld(t *testing.T) {
	h := newFB(t, config.Config{})
	id := h.launch()
	h.busy(id)
	h.tool(id, "call_1", "read", "running", "a.go")
	h.writeProgress()
	h.tool(id, "call_2", "grep", "running", "auth")
	log, _ := logOf(h.effects)
	r := NewMachine(config.Config{API: config.APIConfig{ReadOnly: true}})
	res, _ := r.Restore(h.now, log)
	require.Equal(t, 1, res.Restored)
	tk, _ := r.Task(h.m.order[0])
	require.Equal(t, task.StatusRunning, tk.Status)
	require.Equal(t, []task.ToolRun{{Name: "read", Title: "a.go"}}, tk.Partial.Tools)
	require.Equal(t, 1, tk.Progress.ToolCalls)

	h.answer(id, "", "done")
	log, _ = logOf(h.effects)
	r = NewMachine(config.Config{API: config.APIConfig{ReadOnly: true}})
	r.Restore(h.now, log)
	tk, _ = r.Task(h.m.order[0])
	require.Equal(t, task.StatusCompleted, tk.Status)
	require.Equal(t, "done", tk.Result)
	require.Equal(t, 2, tk.Progress.ToolCalls, "the result's line holds the progress before it")
}

// A fan-out's children write a line each per timer, not one per change: 20 children of 6 steps
// (a tool and a text each) over two timers.
func TestAFanOutWritesFewLines(t *testing.T) {
	h := newFB(t, config.Config{MaxConcurrentStarts: 20})
	var ids []string
	for range 20 {
		id := h.launch()
		h.busy(id)
		ids = append(ids, id)
	}
	from := len(h.effects)
	for step := range 6 {
		for _, id := range ids {
			h.tool(id, fmt.Sprintf("call_%d", step), "read", "completed", "a.go")
			h.work(id, fmt.Sprintf("msg_%d", step), fmt.Sprintf("prt_%d", step), strings.Repeat("found ", 50), true)
		}
		if step%3 == 2 {
			h.writeProgress()
		}
	}
	lines := len(ofKind(h.effects[from:], EffectHistoryAppend))
	require.Equal(t, 20*2, lines, "two timers' lines per child, not one per change (%d)", 20*6*2)
}
