package core

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/httpapi"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// Which logs a process takes at its start, which it follows, and when it must ask first whether
// their writers run.
func TestHistoryPlanFor(t *testing.T) {
	const k = "k"
	running := func(pid int, start string) ProcInfo { return ProcInfo{PID: pid, Running: true, Start: start} }
	gone := func(pid int) ProcInfo { return ProcInfo{PID: pid} }
	cases := []struct {
		name  string
		own   string
		files []string
		procs []ProcInfo
		adopt bool
		want  HistoryPlan
	}{
		{name: "a reader follows every log, with its index where it has one, and takes none", own: "", adopt: true,
			files: []string{"history-k.log", "history-k.7-70.log", "history-k.7-70.idx", "model-health.json", "history-other.log"},
			want:  HistoryPlan{Follow: []string{"history-k.7-70.log", "history-k.log"}, Indexes: map[string]string{"history-k.7-70.log": "history-k.7-70.idx"}}},
		{name: "the log of before becomes the first process's own, index and all", own: "9-90", adopt: true,
			files: []string{"history-k.log", "history-k.idx", "servers-k"},
			want:  HistoryPlan{Adopt: []HistoryAdopt{{From: "history-k.log", To: "history-k.9-90.log", IndexFrom: "history-k.idx", IndexTo: "history-k.9-90.idx"}}}},
		{name: "whether a writer runs is asked first", own: "9-90", adopt: true,
			files: []string{"history-k.7-70.log", "history-k.8.log", "history-k.7-70.log.7.tmp"},
			want:  HistoryPlan{Check: []int{7, 8}}},
		{name: "a live writer's log is followed; a dead one's taken, and the next merged", own: "9-90", adopt: true,
			files: []string{"history-k.7-70.log", "history-k.8.log", "history-k.6-60.log", "history-k.6-60.idx", "history-k.log"},
			procs: []ProcInfo{running(7, "70"), gone(8), running(6, "61")},
			want: HistoryPlan{
				Adopt: []HistoryAdopt{
					{From: "history-k.6-60.log", To: "history-k.9-90.log", IndexFrom: "history-k.6-60.idx", IndexTo: "history-k.9-90.idx"},
					{From: "history-k.8.log", To: "history-k.9-90.1.log", Merge: true},
					{From: "history-k.log", To: "history-k.9-90.2.log", Merge: true},
				},
				Follow: []string{"history-k.7-70.log"},
			}},
		{name: "a start time unknown on either side takes a running pid for the writer", own: "9", adopt: true,
			files: []string{"history-k.7.log", "history-k.8-80.log"}, procs: []ProcInfo{running(7, "70"), running(8, "")},
			want: HistoryPlan{Follow: []string{"history-k.7.log", "history-k.8-80.log"}}},
		{name: "after a restart of the same pid the own log is its own; a merge left by a trap is read again", own: "9-90", adopt: true,
			files: []string{"history-k.9-90.log", "history-k.9-90.2.log", "history-k.8.log"}, procs: []ProcInfo{gone(8)},
			want: HistoryPlan{Adopt: []HistoryAdopt{
				{From: "history-k.9-90.2.log", To: "history-k.9-90.2.log", Merge: true},
				{From: "history-k.8.log", To: "history-k.9-90.3.log", Merge: true},
			}}},
		{name: "a log of this pid with another start, or none, was an earlier process's", own: "9-90", adopt: true,
			files: []string{"history-k.9.log", "history-k.9-80.log"},
			want: HistoryPlan{Adopt: []HistoryAdopt{
				{From: "history-k.9-80.log", To: "history-k.9-90.log"},
				{From: "history-k.9.log", To: "history-k.9-90.1.log", Merge: true},
			}}},
		{name: "a running process takes nothing: it follows what it finds", own: "9-90", adopt: false,
			files: []string{"history-k.9-90.log", "history-k.7-70.log", "history-k.log"},
			want:  HistoryPlan{Follow: []string{"history-k.7-70.log", "history-k.log"}}},
		{name: "names that only look like logs are left alone", own: "9", adopt: true,
			files: []string{"history-k.x.log", "history-k.7.0.log", "history-k.7-1-2.log", "history-k.a.b.c.log", "history-kk.log", "history-k.7.log.tmp"},
			want:  HistoryPlan{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, HistoryPlanFor(k, c.own, c.files, c.procs, c.adopt))
		})
	}
}

// A log name and its parse agree.
func TestHistoryNamesRoundTrip(t *testing.T) {
	for _, owner := range []string{"", "7", "7-70"} {
		for _, n := range []int{0, 3} {
			if owner == "" && n > 0 {
				continue
			}
			p, ok := parseHistoryName("k", historyName("k", owner, n, "log"))
			require.True(t, ok)
			require.Equal(t, owner, p.owner)
			require.Equal(t, n, p.n)
		}
	}
	require.Equal(t, "history-k.7-70.idx", historyName("k", historyOwner(7, "70"), 0, "idx"))
	s := StoragePaths("", "/h", "/p").OwnHistory(7, "70")
	require.True(t, strings.HasSuffix(s.History, ".7-70.log"), s.History)
	require.True(t, strings.HasSuffix(s.HistoryIndex, ".7-70.idx"), s.HistoryIndex)
}

// runningLine is the history line of a task at work in session ses (launched by another process).
func runningLine(id, ses string, startedAt int64) string {
	return HistoryLine(task.Task{ID: id, SessionID: ses, ParentSessionID: "ses_parent_" + id, Description: "d " + id, Agent: "general", Status: task.StatusRunning, StartedAt: startedAt, BatchID: "b_" + id})
}

func kinds(effects []Effect) []string {
	var out []string
	for _, e := range effects {
		out = append(out, e.Kind)
	}
	return out
}

// Process B shows the tasks process A writes, and does nothing to them: a restart of B does not
// reconcile them, its polls and timers do not read them, and its tools and API refuse to cancel
// them. Its own compaction never writes them into its log.
func TestAnotherProcessTasksAreReadOnly(t *testing.T) {
	aLog := runningLine("bg_a1", "ses_a1", 100) + runningLine("bg_a2", "ses_a2", 200)
	b := NewMachine(config.Config{})
	// B (re)starts with a log of its own holding one running task of its own.
	_, effects := b.Restore(1000, runningLine("bg_b1", "ses_b1", 150))
	require.Equal(t, []string{EffectStatus}, kinds(effects), "B reconciles its own task alone")
	res, effects := b.FollowSource(1001, "history-k.7.log", aLog, "", true)
	require.Equal(t, 2, res.Restored)
	for _, e := range effects {
		require.Equal(t, EffectSSEBroadcast, e.Kind)
	}
	tasks := b.Tasks()
	require.Len(t, tasks, 3)
	require.Equal(t, []string{"bg_a1", "bg_b1", "bg_a2"}, []string{tasks[0].ID, tasks[1].ID, tasks[2].ID}, "in start order")

	// The reconcile's status read says nothing is busy: B's own task is read, A's are not.
	all := b.Step(1002, Event{Type: EventEffectDone, EffectID: effects0ID(t, b), OK: true, Result: json.RawMessage(`{}`)})
	for _, e := range all {
		require.NotEqual(t, "ses_a1", e.SessionID)
		require.NotEqual(t, "ses_a2", e.SessionID)
	}
	// A poll, and A's child going idle (were its events to reach B), touch none of A's tasks.
	for _, ev := range []Event{
		{Type: EventTimer, TimerID: pollTimer},
		{Type: EventOpenCode, Event: &OpenCodeEvent{Type: "session.idle", Properties: json.RawMessage(`{"sessionID":"ses_a1"}`)}},
	} {
		for _, e := range b.Step(1003, ev) {
			require.NotEqual(t, "ses_a1", e.SessionID, "%+v", e)
			require.NotEqual(t, EffectHistoryAppend, e.Kind, "nothing of A's is written: %+v", e)
		}
	}
	got, ok := b.Task("ses_a1")
	require.True(t, ok)
	require.Equal(t, task.StatusRunning, got.Status)

	// The tools refuse A's task by name; the API answers 409.
	out := b.Step(1004, Event{Type: EventToolCall, CallID: "c1", Tool: ToolCancel, SessionID: "ses_parent_bg_a1", Args: json.RawMessage(`{"task_id":"bg_a1"}`)})
	reply := findKind(t, out, EffectToolReply)
	require.Contains(t, reply.Error, "another OpenCode process")
	r, effects := b.ServeHTTPEffects(httpapi.Request{Method: "POST", Path: "/v1/tasks/bg_a1/cancel", Port: 5165, Headers: map[string]string{"host": "127.0.0.1:5165", "origin": "http://127.0.0.1:5165", "authorization": "Bearer tok"}}, config.APIConfig{Token: "tok"}, 1005)
	require.Equal(t, 409, r.Status, r.Body)
	require.Contains(t, r.Body, "another OpenCode process")
	require.Empty(t, effects)

	// B's compaction writes its own tasks only.
	b.compact()
	rewrite := findKind(t, b.out, EffectHistoryRewrite)
	require.Contains(t, rewrite.Content, "bg_b1")
	require.NotContains(t, rewrite.Content, "bg_a1")
	b.out = nil

	// A's log adopted by a third process goes away: its tasks leave B's view with it.
	b.FollowSource(1006, "history-k.7.log", "", "", true)
	require.Len(t, b.Tasks(), 1)
	require.Empty(t, b.FollowedSources())
}

// A restore that read adopted logs after its own folds them into its own log, then has them
// removed: the rewrite first, the removes after it, and their running tasks are reconciled as
// its own.
func TestRestoreFoldsMergedLogs(t *testing.T) {
	m := NewMachine(config.Config{})
	m.MergeAtRestore([]string{"history-k.9.1.log"})
	own := runningLine("bg_b1", "ses_b1", 100)
	adopted := runningLine("bg_x1", "ses_x1", 50)
	res, effects := m.Restore(1000, own+adopted)
	require.Equal(t, 2, res.Restored)
	require.Equal(t, []string{EffectHistoryRewrite, EffectHistoryRemove, EffectStatus}, kinds(effects))
	require.Contains(t, effects[0].Content, "bg_x1")
	require.Contains(t, effects[0].Content, "bg_b1")
	require.Equal(t, "history-k.9.1.log", effects[1].File)
	// Nothing merged: no rewrite, no remove.
	m2 := NewMachine(config.Config{})
	_, effects = m2.Restore(1000, own)
	require.Equal(t, []string{EffectStatus}, kinds(effects))
}

// effects0ID is the ID of the reconcile's pending status read.
func effects0ID(t *testing.T, m *Machine) int64 {
	for id, p := range m.pending {
		if len(p.reconcile) > 0 {
			return id
		}
	}
	t.Fatal("no reconcile pending")
	return 0
}

func findKind(t *testing.T, effects []Effect, kind string) Effect {
	for _, e := range effects {
		if e.Kind == kind {
			return e
		}
	}
	t.Fatalf("no %s in %+v", kind, effects)
	return Effect{}
}

// A first read of another process's log with its index loads the tasks from the index, as a
// restart does, and starts, asks and writes nothing: they are that process's.
func TestFollowSourceFirstReadUsesTheIndex(t *testing.T) {
	var log strings.Builder
	for i := 0; i < 2*indexMinLines; i++ {
		log.WriteString(HistoryLine(task.Task{ID: fmt.Sprintf("bg_%022d", i), SessionID: fmt.Sprintf("ses_%d", i), ParentSessionID: "ses_p",
			ParentMessageID: "msg_p", BatchID: "msg_p", Description: "job", Prompt: "Go.", Agent: "general", Depth: 1,
			Status: task.StatusCompleted, StartedAt: int64(1000 + i), CompletedAt: int64(2000 + i), Result: "done"}))
	}
	writer := NewMachine(config.Config{})
	writer.Restore(3000, log.String())
	var index string
	for _, e := range writer.Step(3001, Event{Type: EventTimer, TimerID: HistoryIndexTimer}) {
		if e.Kind == EffectHistoryIndex {
			index = e.Content
		}
	}
	require.NotEmpty(t, index, "the writer leaves an index")

	reader := NewMachine(config.Config{})
	res, effects := reader.FollowSource(4000, "history-k.7-70.log", log.String(), index, true)
	require.Equal(t, 2*indexMinLines, res.Restored)
	require.Positive(t, res.Indexed, "the tasks loaded from the index")
	require.Empty(t, effects)
	require.Len(t, reader.apiTasks(), 2*indexMinLines)
}
