package core

import (
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/history"
	"github.com/asyncagents/asyncagents/core/httpapi"
	"github.com/asyncagents/asyncagents/core/internal/tasktest"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// lazyHistory is n tasks of every status as history lines, a few with the fields only the slow
// reader takes (fallbackInfo) or that sit after the head (error, models, cancelReason).
func lazyHistory(n int) string {
	var b strings.Builder
	for i, t := range tasktest.ManyTasks(n) {
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
	lazy.Restore(tasktest.Now, log)
	whole.Restore(tasktest.Now, log)
	heads := 0
	for _, tk := range lazy.tasks {
		if tk.Lazy() {
			heads++
		}
	}
	require.Greater(t, heads, 200, "finished tasks are restored head first")
	for _, tk := range whole.tasks {
		history.Load(&tk.Task)
	}

	ask := sameAnswerRequests("ses_00000007")
	for _, req := range ask {
		require.Equal(t, whole.ServeHTTP(req, tasktest.APIConfig, tasktest.Now+5), lazy.ServeHTTP(req, tasktest.APIConfig, tasktest.Now+5), "%s?%s", req.Path, req.Query)
	}
	for _, id := range []string{"ses_00000014", "ses_00000021"} {
		a, _ := lazy.Task(id)
		b, _ := whole.Task(id)
		require.Equal(t, b, a, id)
	}
	out := func(m *Machine) []Effect {
		return m.Step(tasktest.Now+5, Event{Type: EventToolCall, CallID: "c1", Tool: ToolOutput, SessionID: "ses_parent", MessageID: "msg_x", Agent: "build",
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
	for i, tk := range tasktest.ManyTasks(300) {
		log.WriteString(HistoryLine(tk))
		if i%2 == 0 {
			log.WriteString(HistoryLine(tk)) // an older record of the same task
		}
	}
	m := NewMachine(config.Config{})
	_, effects := m.Restore(tasktest.Now, log.String()+strings.Repeat(HistoryLine(tasktest.ManyTasks(1)[0]), 400))
	var rewrite string
	for _, e := range effects {
		if e.Kind == EffectHistoryRewrite {
			rewrite = e.Content
		}
	}
	require.NotEmpty(t, rewrite, "a log over twice its live tasks is compacted")
	again := NewMachine(config.Config{})
	res, _ := again.Restore(tasktest.Now, rewrite)
	require.Equal(t, 300, res.Restored)
	for _, want := range tasktest.ManyTasks(300) {
		got, ok := again.Task(want.ID)
		require.True(t, ok, want.ID)
		want.Progress.LastTools = append([]string{}, want.Progress.LastTools...)
		require.Equal(t, publicOf(want), got, want.ID)
	}
}

// Listing one session's tasks reads that session's records whole, and leaves the rest of the
// history (other sessions' tasks) as heads.
func TestListingASessionReadsOnlyItsTasks(t *testing.T) {
	other := task.Task{ID: "ses_mine", ParentSessionID: "ses_other", BatchID: "b", Description: "mine", Agent: "general",
		Status: task.StatusCompleted, StartedAt: 1, CompletedAt: 2, Result: "r"}
	m := NewMachine(config.Config{})
	m.Restore(tasktest.Now, lazyHistory(50)+HistoryLine(other))
	effects := m.Step(tasktest.Now+1, Event{Type: EventToolCall, CallID: "l1", Tool: ToolList, SessionID: "ses_other", MessageID: "msg_o", Agent: "build"})
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
func sameAnswerRequests(detailID string) []httpapi.Request {
	return []httpapi.Request{
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

// publicOf is the copy of t that leaves the machine (run.public).
func publicOf(t task.Task) task.Task { return (&run{Task: t}).public() }
