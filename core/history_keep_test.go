package core

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

// logOf is the history the effects wrote: appends in order, a rewrite replacing all; and the
// bytes written in all.
func logOf(effects []Effect) (log string, written int) {
	for _, e := range effects {
		switch e.Kind {
		case EffectHistoryAppend:
			log += e.Line
			written += len(e.Line)
		case EffectHistoryRewrite:
			log = e.Content
			written += len(e.Content)
		}
	}
	return log, written
}

// A 1 MB prompt and a 300 KB result are each written once, however many lines the task gets (its
// session, progress, its end, its result read, its notice accepted), and the lines read back to
// the same task.
func TestALargePromptAndResultAreWrittenOnce(t *testing.T) {
	h := newFB(t, config.Config{})
	prompt := strings.Repeat("p", 1<<20)
	result := strings.Repeat("r", 300<<10)
	h.step(Event{Type: EventToolCall, CallID: "big", Tool: ToolTask, SessionID: "ses_p", MessageID: "msg_p",
		Args: json.RawMessage(fmt.Sprintf(`{"description":"big","prompt":%q,"agent":"general"}`, prompt))})
	ses := fmt.Sprintf("ses_c%d", h.nextSes)
	id := h.m.order[0]
	for i := range 40 {
		h.oc("message.part.updated", fmt.Sprintf(`{"part":{"id":"tool_%d","sessionID":%q,"messageID":"msg_a","type":"tool","callID":"call_%d","tool":"read","state":{"status":"completed","title":"read %d"}}}`, i, ses, i, i))
	}
	h.answer(ses, "", result)
	h.call(ToolOutput, fmt.Sprintf(`{"task_id":%q}`, id))

	log, written := logOf(h.effects)
	require.Equal(t, 1, strings.Count(log, prompt), "the prompt once")
	require.Equal(t, 1, strings.Count(log, result), "the result once")
	require.Less(t, written, 1<<20+300<<10+64<<10, "the rest are small lines")
	require.Greater(t, strings.Count(log, "\n"), 3, "the task had several lines")

	want, _ := h.m.Task(id)
	m := NewMachine(config.Config{API: config.APIConfig{ReadOnly: true}})
	res, _ := m.Restore(h.now, log)
	require.Zero(t, res.Corrupt)
	got, ok := m.Task(id)
	require.True(t, ok)
	require.Equal(t, want, got)
}

// Lines written before fields were kept (today's: every line whole) read as they always did, and
// a line that keeps fields reads over them; a line that keeps fields of a task no earlier line
// holds is reported, as a corrupt line is.
func TestTodaysLinesAndKeptFieldsReadBack(t *testing.T) {
	base := task.Task{ID: "bg_1", SessionID: "ses_1", ParentSessionID: "ses_p", ParentMessageID: "m", BatchID: "m", Description: "d",
		Prompt: strings.Repeat("p", 500), Agent: "general", Status: task.StatusCompleted, StartedAt: 1000, CompletedAt: 2000,
		Result: strings.Repeat("r", 500), Progress: task.Progress{LastTools: []string{}}, Depth: 1}
	today := HistoryLine(base) // a line in today's format, whole
	read := base
	read.RetrievedAt = 3000
	pub := read
	pub.Prompt, pub.Result = "", ""
	kept := taskRecordLine(&pub, "prompt,result")
	require.True(t, strings.HasPrefix(kept[17:], `{"keep":"prompt,result","task":{`), kept[:60])

	m := NewMachine(config.Config{API: config.APIConfig{ReadOnly: true}})
	res, _ := m.Restore(5000, today)
	require.Zero(t, res.Corrupt)
	got, _ := m.Task("bg_1")
	require.Equal(t, base, got)

	m = NewMachine(config.Config{API: config.APIConfig{ReadOnly: true}})
	res, _ = m.Restore(5000, today+kept)
	require.Zero(t, res.Corrupt)
	got, _ = m.Task("bg_1")
	require.Equal(t, read, got)

	m = NewMachine(config.Config{API: config.APIConfig{ReadOnly: true}})
	res, _ = m.Restore(5000, kept)
	require.Equal(t, 1, res.Corrupt)
	require.Contains(t, res.Problems[0], "keeps fields of a task no earlier line holds")
}

// A restore leaves an index; the next restore reads the indexed tasks as far as their heads, and a
// line after the index that keeps fields reads over them whole.
func TestKeptFieldsReadOverAnIndexedTask(t *testing.T) {
	var lines strings.Builder
	for i := range indexMinLines {
		lines.WriteString(HistoryLine(task.Task{ID: fmt.Sprintf("bg_%04d", i), SessionID: fmt.Sprintf("ses_%04d", i), ParentSessionID: "ses_p",
			ParentMessageID: "m", BatchID: "m", Description: "d", Prompt: strings.Repeat("p", 300), Agent: "general", Status: task.StatusCompleted,
			StartedAt: int64(1000 + i), CompletedAt: 5000, Result: fmt.Sprintf("result %d %s", i, strings.Repeat("r", 300)),
			Progress: task.Progress{LastTools: []string{}}, Depth: 1}))
	}
	log := lines.String()
	m := NewMachine(config.Config{})
	_, effects := m.Restore(9000, log)
	require.NotEmpty(t, ofKind(effects, EffectTimerSet))
	index := ofKind(m.Step(9100, Event{Type: EventTimer, TimerID: indexTimer}), EffectHistoryIndex)
	require.Len(t, index, 1)

	first, _ := m.Task("bg_0003")
	first.RetrievedAt = 9500
	pub := first
	pub.Prompt, pub.Result = "", ""
	log += taskRecordLine(&pub, "prompt,result")
	m = NewMachine(config.Config{API: config.APIConfig{ReadOnly: true}})
	res, _ := m.RestoreIndexed(10_000, log, index[0].Content)
	require.Equal(t, indexMinLines, res.Indexed)
	require.Zero(t, res.Corrupt)
	got, _ := m.Task("bg_0003")
	require.Equal(t, first, got)
}

// A log is compacted once it holds more than twice what its tasks take written whole, however
// few its lines: a child whose tool calls carry long titles repeats them all on every line (the
// last 50), up to the hundreds of lines a count of lines waits for.
func TestALogOutgrowingItsTasksIsCompacted(t *testing.T) {
	h := newFB(t, config.Config{})
	h.launch()
	ses := fmt.Sprintf("ses_c%d", h.nextSes)
	for i := range 120 {
		h.oc("message.part.updated", fmt.Sprintf(`{"part":{"id":"tool_%d","sessionID":%q,"messageID":"msg_a","type":"tool","callID":"call_%d","tool":"bash","state":{"status":"completed","title":%q}}}`,
			i, ses, i, fmt.Sprint(i)+strings.Repeat("t", 5_000)))
		h.writeProgress()
	}
	require.NotEmpty(t, ofKind(h.effects, EffectHistoryRewrite), "compacted before 256 lines")
	log, written := logOf(h.effects)
	want, _ := h.m.Task(h.m.order[0])
	whole := len(HistoryLine(want))
	require.LessOrEqual(t, len(log), 2*whole+compactMinBytes, "the log stays near what it holds")
	t.Logf("%d bytes written, the log %d, the task whole %d", written, len(log), whole)
	m := NewMachine(config.Config{API: config.APIConfig{ReadOnly: true}})
	res, _ := m.Restore(h.now, log)
	require.Zero(t, res.Corrupt)
	got, _ := m.Task(h.m.order[0])
	require.Equal(t, want, got)
}

// The child's partial work is not repeated by the lines that only count its usage.
func TestUsageLinesKeepThePartialWork(t *testing.T) {
	h := newFB(t, config.Config{})
	ses := h.launch()
	for i := range 20 {
		h.oc("message.part.updated", fmt.Sprintf(`{"part":{"id":"tool_%d","sessionID":%q,"messageID":"msg_1","type":"tool","callID":"call_%d","tool":"bash","state":{"status":"completed","title":"step %d"}}}`, i, ses, i, i))
		h.writeProgress()
	}
	from := len(h.effects)
	h.oc("message.updated", usageInfo(ses, "msg_1", 100, 10, 0, 0, 0, 0.001, false))
	h.writeProgress()
	lines := ofKind(h.effects[from:], EffectHistoryAppend)
	require.Len(t, lines, 1)
	require.Contains(t, lines[0].Line, `{"keep":"partial","task":{`)
	require.NotContains(t, lines[0].Line, "step 19")

	want, _ := h.m.Task(h.m.order[0])
	log, _ := logOf(h.effects)
	m := NewMachine(config.Config{API: config.APIConfig{ReadOnly: true}})
	m.Restore(h.now, log)
	got, _ := m.Task(h.m.order[0])
	require.Equal(t, want, got)
	require.Len(t, got.Partial.Tools, 20)
}
