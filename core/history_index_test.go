package core

import (
	"strconv"
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/history"
	"github.com/asyncagents/asyncagents/core/httpapi"
	"github.com/asyncagents/asyncagents/core/internal/tasktest"
	"github.com/asyncagents/asyncagents/core/internal/xxh64"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// indexFrom fires m's index timer and returns the index it writes ("" if none).
func indexFrom(t *testing.T, m *Machine, planned []Effect) string {
	t.Helper()
	timerSet := false
	for _, e := range planned {
		timerSet = timerSet || (e.Kind == EffectTimerSet && e.TimerID == indexTimer)
	}
	if !timerSet {
		return ""
	}
	for _, e := range m.Step(tasktest.Now+1, Event{Type: EventTimer, TimerID: indexTimer}) {
		if e.Kind == EffectHistoryIndex {
			return e.Content
		}
	}
	return ""
}

// restoredIndex is the index a restore of log leaves ("" if it plans none).
func restoredIndex(t *testing.T, log string) string {
	t.Helper()
	m := NewMachine(config.Config{})
	_, effects := m.Restore(tasktest.Now, log)
	return indexFrom(t, m, effects)
}

// indexedHistory is a log a restore plans an index for: 300 tasks of every state, a few of them
// written again, one removed, and a corrupt line.
func indexedHistory() string {
	log := lazyHistory(300)
	tasks := tasktest.ManyTasks(300)
	again := tasks[10]
	again.Status, again.Result = task.StatusCompleted, "written again"
	return log + HistoryLine(again) + "0123456789abcdef {\"task\":torn}\n" +
		history.Line(history.Record{Removed: tasks[20].ID}) + HistoryLine(tasks[30])
}

// historyTail is lines appended after an index was written: a new task, a finished task written
// again, a task at work finishing, a removal and a corrupt line.
func historyTail() string {
	tasks := tasktest.ManyTasks(320)
	changed := tasks[40]
	changed.RetrievedAt = changed.StartedAt + 9
	var running task.Task
	for _, tk := range tasks {
		if tk.Status == task.StatusRunning {
			running = tk
			break
		}
	}
	running.Status, running.Result, running.CompletedAt = task.StatusCompleted, "done at last", running.StartedAt+50
	return HistoryLine(tasks[310]) + HistoryLine(changed) + "feedfacefeedface {}\n" + HistoryLine(running) +
		history.Line(history.Record{Removed: tasks[50].ID}) + HistoryLine(tasks[311])
}

// requireSameMachines asks both machines the same things, the indexed one first.
func requireSameMachines(t *testing.T, whole, indexed *Machine) {
	t.Helper()
	ask := sameAnswerRequests("ses_00000010")
	for _, req := range ask {
		require.Equal(t, whole.ServeHTTP(req, tasktest.APIConfig, tasktest.Now+5), indexed.ServeHTTP(req, tasktest.APIConfig, tasktest.Now+5), "%s?%s", req.Path, req.Query)
	}
	out := func(m *Machine) []Effect {
		return m.Step(tasktest.Now+5, Event{Type: EventToolCall, CallID: "c1", Tool: ToolOutput, SessionID: "ses_parent", MessageID: "msg_x", Agent: "build",
			Args: []byte(`{"task_id":"ses_00000028"}`)})
	}
	require.Equal(t, out(whole), out(indexed))
	require.Equal(t, whole.Tasks(), indexed.Tasks())
	require.Equal(t, whole.order, indexed.order)
	require.Equal(t, whole.historyLines, indexed.historyLines)
}

// A restore that read its log line by line leaves an index; the next restore reads the log's
// start from it and the lines appended since one by one, and gives every answer (tasks, order,
// corrupt lines with their numbers, compaction count) a restore of the whole log gives.
func TestIndexedRestoreAnswersAsAWholeRead(t *testing.T) {
	log := indexedHistory()
	first := NewMachine(config.Config{})
	res, effects := first.Restore(tasktest.Now, log)
	require.Equal(t, 1, res.Corrupt)
	index := indexFrom(t, first, effects)
	require.True(t, strings.HasPrefix(index, indexMagic), "a restore of %d lines plans an index", strings.Count(log, "\n"))

	for name, tail := range map[string]string{"nothing appended": "", "lines appended": historyTail()} {
		t.Run(name, func(t *testing.T) {
			whole, indexed := NewMachine(config.Config{}), NewMachine(config.Config{})
			wantRes, wantEffects := whole.Restore(tasktest.Now, log+tail)
			gotRes, gotEffects := indexed.RestoreIndexed(tasktest.Now, log+tail, index)
			require.Equal(t, 299, gotRes.Indexed, "every task of the indexed log comes from the index")
			gotRes.Indexed = 0
			require.Equal(t, wantRes, gotRes)
			// The whole read plans an index, having read 300 lines; the indexed one read the
			// tail alone, and plans none.
			require.NotEmpty(t, indexFrom(t, whole, wantEffects))
			require.Empty(t, indexFrom(t, indexed, gotEffects))
			requireSameMachines(t, whole, indexed)
		})
	}
}

// An index that does not describe the log it comes with is not used, and changes nothing: the
// restore reads the whole log.
func TestAnIndexThatDoesNotFitIsNotUsed(t *testing.T) {
	log := indexedHistory()
	index := restoredIndex(t, log)
	require.NotEmpty(t, index)
	var otherLog strings.Builder
	for _, tk := range tasktest.ManyTasks(280) {
		tk.Description += " (elsewhere)"
		otherLog.WriteString(HistoryLine(tk))
	}
	otherIndex := restoredIndex(t, otherLog.String())
	require.NotEmpty(t, otherIndex)
	flip := func(s string, at int) string { b := []byte(s); b[at] ^= 1; return string(b) }
	mid := len(index) / 2

	// twice is the index with its second entry written again after the first, resealed: what
	// the core never writes, with a checksum that holds.
	lines := strings.SplitAfter(index[:len(index)-17], "\n")
	header := strings.Fields(lines[0])
	header[len(header)-1] = strconv.Itoa(len(lines) - 2) // the entries, and one more
	twiceBody := strings.Join(header, " ") + "\n" + lines[1] + lines[2] + lines[2] + strings.Join(lines[3:], "")
	twice := twiceBody + string(appendHex16(nil, xxh64.Sum([]byte(twiceBody)))) + "\n"

	cases := []struct{ name, log, index string }{
		{"the index holds a task twice", log, twice},
		{"the log was edited inside what the index covers", flip(log, 5000), index},
		{"the log was cut short", log[:len(log)/2], index},
		{"the index belongs to another log", log, otherIndex},
		{"a byte of the index is wrong", log, flip(index, mid)},
		{"the index is torn", log, index[:mid]},
		{"the index's checksum is wrong", log, flip(index, len(index)-2)},
		{"the index is from another version", log, strings.Replace(index, indexMagic, "asyncagents-index 1 ", 1)},
		{"the index is not one", log, "{}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			whole, indexed := NewMachine(config.Config{}), NewMachine(config.Config{})
			wantRes, _ := whole.Restore(tasktest.Now, c.log)
			gotRes, gotEffects := indexed.RestoreIndexed(tasktest.Now, c.log, c.index)
			require.Zero(t, gotRes.Indexed)
			require.Equal(t, wantRes, gotRes)
			requireSameMachines(t, whole, indexed)
			if strings.HasSuffix(c.log, "\n") {
				require.NotEmpty(t, indexFrom(t, indexed, gotEffects), "a restore that could not use its index plans a new one")
			}
		})
	}
}

// A compaction leaves an index of the log it writes: the restore after it reads no line.
func TestCompactionLeavesAnIndex(t *testing.T) {
	var log strings.Builder
	log.WriteString(lazyHistory(300))
	for range 400 {
		log.WriteString(HistoryLine(tasktest.ManyTasks(1)[0]))
	}
	m := NewMachine(config.Config{})
	_, effects := m.Restore(tasktest.Now, log.String())
	var rewrite string
	for _, e := range effects {
		if e.Kind == EffectHistoryRewrite {
			rewrite = e.Content
		}
	}
	require.NotEmpty(t, rewrite, "a log over twice its live tasks is compacted")
	index := indexFrom(t, m, effects)
	require.NotEmpty(t, index)

	whole, indexed := NewMachine(config.Config{}), NewMachine(config.Config{})
	whole.Restore(tasktest.Now, rewrite)
	res, _ := indexed.RestoreIndexed(tasktest.Now, rewrite, index)
	require.Equal(t, 300, res.Indexed)
	requireSameMachines(t, whole, indexed)
}

// Another process compacting the log (follow with replace) drops the index planned for the old
// one; lines merely appended keep it, since it covers the log's start only.
func TestFollowingACompactionDropsThePlannedIndex(t *testing.T) {
	log := indexedHistory()
	for _, replace := range []bool{false, true} {
		m := NewMachine(config.Config{})
		_, effects := m.Restore(tasktest.Now, log)
		following := historyTail()
		if replace {
			following = lazyHistory(10)
		}
		m.Follow(tasktest.Now, following, replace)
		index := indexFrom(t, m, effects)
		if replace {
			require.Empty(t, index)
			continue
		}
		require.NotEmpty(t, index)
		whole, indexed := NewMachine(config.Config{}), NewMachine(config.Config{})
		whole.Restore(tasktest.Now, log+following)
		res, _ := indexed.RestoreIndexed(tasktest.Now, log+following, index)
		require.Equal(t, 299, res.Indexed)
		requireSameMachines(t, whole, indexed)
	}
}

// smallIndexedLog is a log of 22 lines that holds every kind of entry an index has (finished
// heads, tasks at work, a task written twice, a removal, a corrupt line), with the index a
// restore of it would leave if it were long enough to get one. Small, so that a fuzzer runs it
// hundreds of times a second.
func smallIndexedLog(t *testing.T) (log, index string) {
	log = lazyHistory(18)
	tasks := tasktest.ManyTasks(18)
	again := tasks[3]
	again.Status, again.Result = task.StatusCompleted, "written again"
	log += HistoryLine(again) + "0123456789abcdef {\"task\":torn}\n" +
		history.Line(history.Record{Removed: tasks[7].ID}) + HistoryLine(tasks[12])
	m := NewMachine(config.Config{})
	res, _ := m.Restore(tasktest.Now, log)
	require.Equal(t, 1, res.Corrupt)
	index = m.restoredSnapshot(log, m.order, m.historyLines, strings.Count(log, "\n"), res).text()
	return log, index
}

// The fuzzers' index is one a restore uses, and it gives what the whole log gives.
func TestTheFuzzersIndexIsUsed(t *testing.T) {
	log, index := smallIndexedLog(t)
	whole, indexed := NewMachine(config.Config{}), NewMachine(config.Config{})
	whole.Restore(tasktest.Now, log)
	res, _ := indexed.RestoreIndexed(tasktest.Now, log, index)
	require.Equal(t, 17, res.Indexed)
	requireSameMachines(t, whole, indexed)
}

// A changed index (torn, edited, of another log) is never used to give other tasks than the log
// gives: its seal fails, or its log's hash does, and the whole log is read.
func FuzzHistoryIndex(f *testing.F) {
	log, index := smallIndexedLog(&testing.T{})
	f.Add(index)
	f.Add(index[:len(index)/3])
	f.Add(indexMagic + "0 0000000000000000 0 0 0 0 0\n")
	whole := NewMachine(config.Config{})
	wantRes, _ := whole.Restore(tasktest.Now, log)
	want := whole.Tasks()
	f.Fuzz(func(t *testing.T, index string) {
		m := NewMachine(config.Config{})
		res, _ := m.RestoreIndexed(tasktest.Now, log, index)
		require.Equal(t, want, m.Tasks())
		require.Equal(t, wantRes.Corrupt, res.Corrupt)
		require.Equal(t, wantRes.Problems, res.Problems)
	})
}

// The seal is no proof of sense: an index edited by hand and sealed again (or one a buggy core
// wrote) reaches the parser. Whatever its entries say, the restore does not panic, and every
// task it gives can be read whole and served.
func FuzzHistoryIndexResealed(f *testing.F) {
	log, index := smallIndexedLog(&testing.T{})
	body := index[:len(index)-17]
	f.Add(body)
	f.Add(strings.Replace(body, "h ", "w ", 3))
	f.Add(body[:len(body)/2])
	f.Fuzz(func(t *testing.T, body string) {
		sealed := body + string(appendHex16(nil, xxh64.Sum([]byte(body)))) + "\n"
		m := NewMachine(config.Config{})
		m.RestoreIndexed(tasktest.Now, log, sealed)
		for _, tk := range m.Tasks() {
			m.ServeHTTP(apiGet("/v1/tasks/"+tk.ID, ""), tasktest.APIConfig, tasktest.Now+5)
		}
		m.ServeHTTP(apiGet("/v1/tasks", "limit=200"), tasktest.APIConfig, tasktest.Now+5)
		m.ServeHTTP(apiGet("/v1/stats", ""), tasktest.APIConfig, tasktest.Now+5)
		m.ServeHTTP(apiGet("/v1/task-groups/batch_1", ""), tasktest.APIConfig, tasktest.Now+5)
	})
}

// A restored task is no news to the event streams: its next change is an update, whether it
// came from the index or from its line, not a creation.
func TestARestoredTaskChangesAsAnUpdate(t *testing.T) {
	log := indexedHistory()
	index := restoredIndex(t, log)
	for name, restore := range map[string]func(m *Machine){
		"read line by line": func(m *Machine) { m.Restore(tasktest.Now, log) },
		"read from the index": func(m *Machine) {
			res, _ := m.RestoreIndexed(tasktest.Now, log, index)
			require.NotZero(t, res.Indexed)
		},
	} {
		t.Run(name, func(t *testing.T) {
			m := NewMachine(config.Config{})
			restore(m)
			tk, ok := m.Task("ses_00000028")
			require.True(t, ok)
			require.Equal(t, task.StatusCompleted, tk.Status)
			var frames []string
			for _, e := range m.Step(tasktest.Now+5, Event{Type: EventToolCall, CallID: "c1", Tool: ToolOutput, SessionID: "ses_parent", MessageID: "msg_x", Agent: "build",
				Args: []byte(`{"task_id":"ses_00000028"}`)}) {
				if e.Kind == EffectSSEBroadcast {
					frames = append(frames, e.Frame)
				}
			}
			require.Len(t, frames, 1, "reading the result is a change (retrievedAt)")
			require.True(t, strings.HasPrefix(frames[0], "event: "+httpapi.SSETaskUpdated+"\n"), frames[0])
		})
	}
}
