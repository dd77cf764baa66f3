package core

import (
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// lazyHistory is n tasks of every status as history lines, a few with the fields only the slow
// reader takes (fallbackInfo) or that sit after the head (error, models, cancelReason).
func lazyHistory(n int) string {
	var b strings.Builder
	for i, t := range apiManyTasks(n) {
		switch i % 11 {
		case 3:
			t.FallbackInfo = &task.FallbackInfo{Occurred: true, Attempts: []task.FallbackAttempt{{Model: "a/b"}, {Model: "c/d", Success: true}}, TotalAttempts: 2}
			t.Models = []string{"a/b", "c/d"}
		case 7:
			t.CancelReason = "not needed"
			t.RetrievedAt = t.StartedAt + 1
		}
		b.WriteString(HistoryLine(t))
	}
	return b.String()
}

// A restore reads finished tasks' heads only; every answer is still the one a machine that
// read every record whole gives, whatever was read before it. The lazy machine is asked first,
// so each answer meets tasks in every state: never read, read by an earlier answer.
func TestLazyRestoreAnswersAsAWholeRead(t *testing.T) {
	log := lazyHistory(300)
	lazy, whole := NewMachine(config.Config{}), NewMachine(config.Config{})
	lazy.Restore(apiNow, log)
	whole.Restore(apiNow, log)
	heads := 0
	for _, tk := range lazy.tasks {
		if tk.Lazy() {
			heads++
		}
	}
	require.Greater(t, heads, 200, "finished tasks are restored head first")
	for _, tk := range whole.tasks {
		load(&tk.Task)
	}

	ask := sameAnswerRequests("ses_00000007")
	for _, req := range ask {
		require.Equal(t, whole.ServeHTTP(req, apiCfg, apiNow+5), lazy.ServeHTTP(req, apiCfg, apiNow+5), "%s?%s", req.Path, req.Query)
	}
	for _, id := range []string{"ses_00000014", "ses_00000021"} {
		a, _ := lazy.Task(id)
		b, _ := whole.Task(id)
		require.Equal(t, b, a, id)
	}
	out := func(m *Machine) []Effect {
		return m.Step(apiNow+5, Event{Type: EventToolCall, CallID: "c1", Tool: ToolOutput, SessionID: "ses_parent", MessageID: "msg_x", Agent: "build",
			Args: []byte(`{"task_id":"ses_00000028"}`)})
	}
	require.Equal(t, out(whole), out(lazy))
	require.Equal(t, whole.Tasks(), lazy.Tasks())
	for id, tk := range lazy.tasks {
		require.False(t, tk.Lazy(), "%s is read whole once everything has been asked", id)
	}
}

// The history rewritten after a lazy restore (a compaction) holds every record whole.
func TestCompactionAfterALazyRestoreWritesWholeRecords(t *testing.T) {
	var log strings.Builder
	for i, tk := range apiManyTasks(300) {
		log.WriteString(HistoryLine(tk))
		if i%2 == 0 {
			log.WriteString(HistoryLine(tk)) // an older record of the same task
		}
	}
	m := NewMachine(config.Config{})
	_, effects := m.Restore(apiNow, log.String()+strings.Repeat(HistoryLine(apiManyTasks(1)[0]), 400))
	var rewrite string
	for _, e := range effects {
		if e.Kind == EffectHistoryRewrite {
			rewrite = e.Content
		}
	}
	require.NotEmpty(t, rewrite, "a log over twice its live tasks is compacted")
	again := NewMachine(config.Config{})
	res, _ := again.Restore(apiNow, rewrite)
	require.Equal(t, 300, res.Restored)
	for _, want := range apiManyTasks(300) {
		got, ok := again.Task(want.ID)
		require.True(t, ok, want.ID)
		want.Progress.LastTools = append([]string{}, want.Progress.LastTools...)
		require.Equal(t, publicOf(want), got, want.ID)
	}
}

// A finished task's record is read head first only when its head holds every field the head
// stands for; one written in another order (agent after startedAt here) is read whole.
func TestRecordsInAnotherOrderAreReadWhole(t *testing.T) {
	inOrder := `{"task":{"sessionID":"a","parentSessionID":"p","parentMessageID":"m","batchId":"b","description":"d","prompt":"x","agent":"general","status":"completed","startedAt":1,"result":"r","progress":{"toolCalls":0,"lastTools":[],"lastUpdate":0}}}`
	reordered := `{"task":{"sessionID":"a","parentSessionID":"p","parentMessageID":"m","batchId":"b","description":"d","prompt":"x","status":"completed","startedAt":1,"agent":"general","result":"r"}}`
	running := strings.Replace(inOrder, `"completed"`, `"running"`, 1)
	for _, c := range []struct {
		body string
		head bool
	}{{inOrder, true}, {reordered, false}, {running, false}} {
		r, err := readRecordHead(c.body)
		require.NoError(t, err)
		require.Equal(t, c.head, r.Task.Lazy(), c.body)
		require.Equal(t, "general", r.Task.Agent)
		load(r.Task)
		whole, err := decodeRecord(c.body)
		require.NoError(t, err)
		if whole.Task.Progress.LastTools == nil && c.head {
			whole.Task.Progress.LastTools = []string{}
		}
		require.Equal(t, whole.Task, r.Task, c.body)
	}
}

// FuzzLazyRecord: a record the fast reader reads (every record the core writes), read head first
// and then loaded, is the record read whole. (A record only encoding/json reads, such as one
// with a key repeated after the head, can only be made by hand: see history_lazy.go.)
func FuzzLazyRecord(f *testing.F) {
	for _, l := range strings.Split(lazyHistory(12), "\n") {
		if _, body, ok := strings.Cut(l, " "); ok {
			f.Add(body)
		}
	}
	f.Fuzz(func(t *testing.T, body string) {
		whole, err := fastRecord(body)
		if err != nil || whole.Task == nil {
			return
		}
		r, err := readRecordHead(body)
		require.NoError(t, err)
		load(r.Task)
		for _, tk := range []*task.Task{whole.Task, r.Task} {
			if tk.Progress.LastTools == nil {
				tk.Progress.LastTools = []string{}
			}
		}
		require.Equal(t, whole.Task, r.Task, "%q", body)
	})
}

// Listing one session's tasks reads that session's records whole, and leaves the rest of the
// history (other sessions' tasks) as heads.
func TestListingASessionReadsOnlyItsTasks(t *testing.T) {
	other := task.Task{ID: "ses_mine", ParentSessionID: "ses_other", BatchID: "b", Description: "mine", Agent: "general",
		Status: task.StatusCompleted, StartedAt: 1, CompletedAt: 2, Result: "r"}
	m := NewMachine(config.Config{})
	m.Restore(apiNow, lazyHistory(50)+HistoryLine(other))
	effects := m.Step(apiNow+1, Event{Type: EventToolCall, CallID: "l1", Tool: ToolList, SessionID: "ses_other", MessageID: "msg_o", Agent: "build"})
	require.Len(t, effects, 1)
	require.Contains(t, effects[0].Output, "ses_mine")
	require.NotContains(t, effects[0].Output, "ses_00000000")
	require.False(t, m.tasks["ses_mine"].Lazy())
	heads := 0
	for _, tk := range m.tasks {
		if tk.Lazy() {
			heads++
		}
	}
	require.Greater(t, heads, 30, "the other session's finished tasks are still heads")
}

// sameAnswerRequests is what two machines restored from the same history in two ways are asked,
// to show they answer alike: every route, filters, pages, one task (detailID) and the stream.
func sameAnswerRequests(detailID string) []HTTPRequest {
	return []HTTPRequest{
		apiGet("/v1/health", ""),
		apiGet("/v1/tasks", "limit=1"),
		apiGet("/v1/tasks", "status=completed&offset=7&limit=3"),
		apiGet("/v1/tasks", "agent=build&search=module%2012"),
		apiGet("/v1/tasks/ses_00000003", ""),
		apiGet("/v1/tasks/"+detailID, ""),
		apiGet("/v1/task-groups/batch_5", ""),
		apiGet("/v1/stats", ""),
		apiGet("/v1/tasks", "limit=200&offset=100"),
		apiGet("/v1/events", ""),
		apiGet("/v1/tasks", "limit=200"),
	}
}
