package core

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/history"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// historyRun drives a machine through n launched-and-finished tasks with some progress each,
// and returns it with every history line it asked to append (and the last rewrite, if any).
func historyRun(t testing.TB, n int) (*Machine, string) {
	m := NewMachine(config.Config{MaxConcurrentStarts: 1000})
	var log strings.Builder
	step := func(now int64, ev Event) []Effect {
		effects := m.Step(now, ev)
		for _, e := range effects {
			switch e.Kind {
			case EffectHistoryAppend:
				log.WriteString(e.Line)
			case EffectHistoryRewrite:
				log.Reset()
				log.WriteString(e.Content)
			}
		}
		return effects
	}
	find := func(effects []Effect, kind string) Effect {
		for _, e := range effects {
			if e.Kind == kind {
				return e
			}
		}
		t.Fatalf("no %s effect in %+v", kind, effects)
		return Effect{}
	}
	agents := json.RawMessage(`[{"name":"general","mode":"subagent"}]`)
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("ses_%05d", i)
		eff := step(int64(i), Event{Type: EventToolCall, CallID: "c" + id, Tool: ToolTask, SessionID: "ses_p", MessageID: "m", Args: json.RawMessage(`{"description":"d","prompt":"p","agent":"general"}`)})
		for _, e := range eff {
			if e.Kind == EffectAgentsList {
				eff = step(int64(i), Event{Type: EventEffectDone, EffectID: e.ID, OK: true, Result: agents})
			}
		}
		create := find(eff, EffectSessionCreate)
		eff = step(int64(i), Event{Type: EventEffectDone, EffectID: create.ID, OK: true, Result: json.RawMessage(`{"id":"` + id + `"}`)})
		step(int64(i), Event{Type: EventEffectDone, EffectID: find(eff, EffectPromptAsync).ID, OK: true})
		for k := 0; k < 3; k++ {
			part := fmt.Sprintf(`{"part":{"sessionID":%q,"type":"tool","callID":"k%d","tool":"read"}}`, id, k)
			step(int64(i), Event{Type: EventOpenCode, Event: &OpenCodeEvent{Type: "message.part.updated", Properties: json.RawMessage(part)}})
		}
		eff = step(int64(i), Event{Type: EventOpenCode, Event: &OpenCodeEvent{Type: "session.idle", Properties: json.RawMessage(`{"sessionID":"` + id + `"}`)}})
		msgs := `[{"info":{"id":"a","role":"assistant","finish":"stop","time":{"created":1,"completed":2}},"parts":[{"type":"text","text":"result ` + id + `"}]}]`
		step(int64(i), Event{Type: EventEffectDone, EffectID: find(eff, EffectMessages).ID, OK: true, Result: json.RawMessage(msgs)})
	}
	return m, log.String()
}

func TestHistoryRoundTrip(t *testing.T) {
	m, log := historyRun(t, 50)
	r := NewMachine(config.Config{})
	res, _ := r.Restore(1e6, log)
	require.Equal(t, 50, res.Restored)
	require.Zero(t, res.Corrupt)
	want, _ := json.Marshal(m.Tasks())
	got, _ := json.Marshal(r.Tasks())
	require.JSONEq(t, string(want), string(got))
}

func TestHistoryTornLastLineLosesOnlyThatRecord(t *testing.T) {
	_, log := historyRun(t, 5)
	lines := strings.SplitAfter(log, "\n")
	lines = lines[:len(lines)-1] // the trailing "" after the last newline
	torn := strings.Join(lines[:len(lines)-1], "") + lines[len(lines)-1][:len(lines[len(lines)-1])/2]
	r := NewMachine(config.Config{})
	res, _ := r.Restore(1e6, torn)
	require.Equal(t, 1, res.Corrupt)
	require.Equal(t, 5, res.Restored, "earlier records of the torn task survive")
	// A corrupt line in the middle loses that line alone too.
	mid := strings.Replace(log, `"result":"result ses_00002"`, `"result":"RESULT ses_00002"`, 1)
	r2 := NewMachine(config.Config{})
	res2, _ := r2.Restore(1e6, mid)
	require.Equal(t, 1, res2.Corrupt)
	require.Equal(t, 5, res2.Restored)
}

// A log whose last line is torn (a disk full, a power loss) gets a newline before the next line
// appended to it: the task launched after the restart is whole at the next restore, and the torn
// line alone is lost.
func TestHistoryTornLastLineIsEndedBeforeTheNextAppend(t *testing.T) {
	_, log := historyRun(t, 3)
	torn := log + `{"torn":"a5c5`
	m := NewMachine(config.Config{})
	res, _ := m.Restore(1e6, torn)
	require.Equal(t, 1, res.Corrupt)
	appended := torn
	carry := func(effects []Effect) []Effect {
		for _, e := range effects {
			require.NotEqual(t, EffectHistoryRewrite, e.Kind, "the test is of appends")
			if e.Kind == EffectHistoryAppend {
				appended += e.Line
			}
		}
		return effects
	}
	eff := carry(m.Step(1e6, Event{Type: EventToolCall, CallID: "c_next", Tool: ToolTask, SessionID: "ses_p", MessageID: "m",
		Args: json.RawMessage(`{"description":"next","prompt":"p","agent":"general"}`)}))
	for _, e := range eff {
		if e.Kind == EffectAgentsList {
			carry(m.Step(1e6, Event{Type: EventEffectDone, EffectID: e.ID, OK: true, Result: json.RawMessage(`[{"name":"general","mode":"subagent"}]`)}))
		}
	}
	require.Greater(t, len(appended), len(torn), "the launch appended its task")
	require.Equal(t, `{"torn":"a5c5`+"\n", appended[len(log):len(torn)+1], "the torn line is ended, not glued to the next")

	r := NewMachine(config.Config{})
	res, _ = r.Restore(2e6, appended)
	require.Equal(t, 1, res.Corrupt, "the torn line alone is lost: %v", res.Problems)
	require.Equal(t, 4, res.Restored, "the task launched after the torn line survives the next restart")
	require.Equal(t, "next", r.Tasks()[3].Description)
}

// One change costs one appended line whatever the history's size, and the log is compacted
// before it grows past twice its live tasks (plus a floor), so restarts stay fast.
func TestHistoryWritesPerChangeAreConstant(t *testing.T) {
	m, log := historyRun(t, 400)
	lines := strings.Count(log, "\n")
	require.LessOrEqual(t, lines, 2*400+1, "compaction keeps the log near its live size")
	t1 := m.task("ses_00399")
	require.NotNil(t, t1)
	before := len(log)
	effects := m.Step(1e6, Event{Type: EventToolCall, CallID: "o", Tool: ToolOutput, Args: json.RawMessage(`{"task_id":"ses_00399"}`)})
	appends := 0
	for _, e := range effects {
		if e.Kind == EffectHistoryAppend {
			appends++
			require.Contains(t, e.Line, `"retrievedAt":1000000`)
		}
	}
	require.Equal(t, 1, appends, "one line for one change")
	require.Equal(t, int64(1e6), t1.RetrievedAt)
	require.Positive(t, before)
}

// syntheticHistory is a compacted log of n finished tasks, as a long-used install would have.
func syntheticHistory(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		t := &task.Task{ID: fmt.Sprintf("ses_%06d", i), ParentSessionID: "ses_p", BatchID: fmt.Sprintf("m%d", i/5), Description: "survey a module",
			Prompt: strings.Repeat("Look at the code and report. ", 8), Agent: "general", Status: task.StatusCompleted, StartedAt: int64(i), CompletedAt: int64(i + 5000),
			Result: strings.Repeat("Findings line. ", 30), Progress: task.Progress{ToolCalls: 7, LastTools: []string{"read", "grep", "read", "glob", "read"}}, Depth: 1}
		b.WriteString(history.Line(history.Record{Task: t}))
	}
	return b.String()
}

func BenchmarkRestore10k(b *testing.B) {
	log := syntheticHistory(10_000)
	b.SetBytes(int64(len(log)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := NewMachine(config.Config{})
		res, _ := r.Restore(1e9, log)
		if res.Restored != 10_000 {
			b.Fatalf("restored %d", res.Restored)
		}
	}
}

// FuzzHistoryLine: the record parser never panics, and a line it accepts holds a task with an
// ID or a removal, and encodes back to a line it accepts again.
func FuzzHistoryLine(f *testing.F) {
	_, log := historyRun(f, 2)
	for _, l := range strings.Split(log, "\n") {
		f.Add(l)
		if len(l) > 20 {
			f.Add(l[:len(l)/2])
		}
	}
	f.Add(history.Line(history.Record{Removed: "ses_x"}))
	f.Add("00000000 {}")
	f.Add("zzzzzzzz {\"task\":{\"id\":\"a\"}}")
	f.Fuzz(func(t *testing.T, line string) {
		r, _, err := history.ParseLine(line, false)
		if err != nil {
			return
		}
		if r.Removed == "" {
			require.NotNil(t, r.Task)
			require.NotEmpty(t, r.Task.ID)
		}
		again, legacy, err := history.ParseLine(strings.TrimSuffix(history.Line(r), "\n"), false)
		require.False(t, legacy, "lines are written with XXH64")
		require.NoError(t, err)
		require.Equal(t, r.Removed, again.Removed)
	})
}

// FuzzRestore: any bytes as a history log restore without a panic, every line is either a record
// or counted corrupt, and a follower reading the same bytes ends with the same tasks.
func FuzzRestore(f *testing.F) {
	// Small seeds: the fuzzer minimises every input it finds interesting, line by line.
	_, log := historyRun(f, 1)
	f.Add(log)
	f.Add(log[:len(log)/2])
	f.Add(strings.ReplaceAll(log, "completed", "cancelled"))
	f.Add("\n\n\x00\xff")
	f.Fuzz(func(t *testing.T, hist string) {
		m := NewMachine(config.Config{})
		res, _ := m.Restore(1e6, hist)
		require.Equal(t, len(m.tasks), res.Restored)
		require.Len(t, m.order, len(m.tasks), "every task once in the launch order")
		fl := NewMachine(config.Config{})
		fres, _ := fl.Follow(1e6, hist, false)
		require.Equal(t, res.Corrupt, fres.Corrupt)
		require.ElementsMatch(t, ids(m.Tasks()), ids(fl.Tasks()))
	})
}

func ids(ts []task.Task) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}

// BenchmarkEventWithHistory: one OpenCode event for a running task costs the same with 10 or
// 10,000 finished tasks in the store (the indexes in index.go).
func BenchmarkEventWithHistory(b *testing.B) {
	for _, n := range []int{10, 10_000} {
		b.Run(fmt.Sprintf("%d-tasks", n), func(b *testing.B) {
			m, _ := historyRun(b, 1)
			live := m.Tasks()[0]
			live.Status = task.StatusRunning
			r := NewMachine(config.Config{})
			r.Restore(1e9, syntheticHistory(n)+history.Line(history.Record{Task: &live}))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				part := fmt.Sprintf(`{"part":{"sessionID":%q,"type":"tool","callID":"x%d","tool":"read"}}`, live.ID, i)
				r.Step(int64(2e9+i), Event{Type: EventOpenCode, Event: &OpenCodeEvent{Type: "message.part.updated", Properties: json.RawMessage(part)}})
				r.Step(int64(2e9+i), Event{Type: EventTimer, TimerID: pollTimer})
			}
		})
	}
}
