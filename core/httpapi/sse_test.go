package httpapi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/internal/tasktest"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

func TestSSEFrame(t *testing.T) {
	require.Equal(t, "event: x\ndata: {\"a\":\"line\\nbreak\"}\n\n", SSEFrame("x", map[string]string{"a": "line\nbreak"}))
	require.Equal(t, "event: x\ndata: null\n\n", SSEFrame("x", nil))
	require.Equal(t, "event: xy\ndata: 1\n\n", SSEFrame("x\r\ny", 1))
	// Raw JSON with line breaks comes out compacted on one line.
	require.Equal(t, "event: x\ndata: {\"a\":1}\n\n", SSEFrame("x", json.RawMessage("{\n  \"a\": 1\n}")))
	// What cannot be marshalled becomes an error object, not a broken frame.
	f := SSEFrame("x", func() {})
	require.True(t, strings.HasPrefix(f, "event: x\ndata: {\"error\":\"encoding the event failed: "), f)
	require.True(t, strings.HasSuffix(f, "}\n\n"))
}

// parseSSE reads frames back as a client would.
func apiParseSSE(t testing.TB, s string) (events []string, data []string) {
	t.Helper()
	require.True(t, strings.HasSuffix(s, "\n\n"), "frame must end with a blank line: %q", s)
	for _, block := range strings.Split(strings.TrimSuffix(s, "\n\n"), "\n\n") {
		var ev string
		var lines []string
		for _, line := range strings.Split(block, "\n") {
			switch {
			case strings.HasPrefix(line, "event: "):
				ev = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				lines = append(lines, strings.TrimPrefix(line, "data: "))
			default:
				t.Fatalf("unexpected SSE line %q", line)
			}
		}
		require.Len(t, lines, 1, "one data line per frame")
		events = append(events, ev)
		data = append(data, lines[0])
	}
	return events, data
}

func TestSSESnapshotFrame(t *testing.T) {
	tasks := tasktest.Tasks()
	ev, data := apiParseSSE(t, SnapshotFrame(tasks, tasktest.Now))
	require.Equal(t, []string{"snapshot"}, ev)
	var snap struct {
		Tasks []task.Task `json:"tasks"`
		Stats APIStats    `json:"stats"`
	}
	require.NoError(t, json.Unmarshal([]byte(data[0]), &snap))
	require.Len(t, snap.Tasks, 5)
	require.Equal(t, "ses_e", snap.Tasks[0].ID)
	require.Equal(t, apiComputeStats(apiPtrs(tasks), tasktest.Now), snap.Stats)

	_, data = apiParseSSE(t, SnapshotFrame(nil, tasktest.Now))
	require.JSONEq(t, `{"tasks":[],"stats":{"byStatus":{"running":0,"completed":0,"error":0,"cancelled":0,"resumed":0,"queued":0},"byAgent":{},
		"duration":{"avg":0,"max":0,"min":0,"count":0},"totalTasks":0,"activeTasks":0}}`, data[0])
}

func TestSSETaskEventName(t *testing.T) {
	cases := []struct {
		prev, next task.Status
		created    bool
		want       string
	}{
		{"", task.StatusRunning, true, "task.created"},
		{"", task.StatusError, true, "task.created"},
		{task.StatusRunning, task.StatusRunning, false, "task.updated"},
		{task.StatusRunning, task.StatusCompleted, false, "task.completed"},
		{task.StatusRunning, task.StatusError, false, "task.error"},
		{task.StatusRunning, task.StatusCancelled, false, "task.cancelled"},
		{task.StatusResumed, task.StatusCompleted, false, "task.completed"},
		{task.StatusResumed, task.StatusError, false, "task.error"},
		{task.StatusCompleted, task.StatusResumed, false, "task.updated"},
		{task.StatusCompleted, task.StatusCompleted, false, "task.updated"}, // e.g. the result was retrieved
		{task.StatusError, task.StatusError, false, "task.updated"},
		{task.StatusCancelled, task.StatusCancelled, false, "task.updated"},
	}
	for _, c := range cases {
		require.Equal(t, c.want, TaskEventName(c.prev, c.next, c.created), "%s -> %s created=%v", c.prev, c.next, c.created)
	}
}

func TestSSETaskFrame(t *testing.T) {
	tk := tasktest.Tasks()[2]
	ev, data := apiParseSSE(t, TaskFrame(task.StatusRunning, false, tk, 0))
	require.Equal(t, []string{"task.error"}, ev)
	want, _ := json.Marshal(publicOf(tk))
	require.JSONEq(t, string(want), data[0])
	require.Contains(t, data[0], `"error":{"name":"ProviderError","message":"rate limited"}`)
}

func TestSSEHeartbeatFrame(t *testing.T) {
	require.Equal(t, "event: heartbeat\ndata: {\"ts\":\"2024-01-02T03:04:05.678Z\"}\n\n", HeartbeatFrame(1704164645678))
	require.Equal(t, "event: heartbeat\ndata: {\"ts\":\"1970-01-01T00:00:00.000Z\"}\n\n", HeartbeatFrame(0))
}

// A task's frame is written from its JSON as task.AppendJSON writes it, without marshalling it
// again: the frame must be the one encoding/json would write for the task, HTML characters, line
// breaks, U+2028 and invalid UTF-8 included.
func TestSSEFrameJSONIsTheMarshalledFrame(t *testing.T) {
	for _, text := range []string{"plain", "<b>a & b</b>", "line\nbreak\r\n", "sep\u2028arator é", "bad \xff byte", ""} {
		tk := task.Task{ID: "bg_1", SessionID: "ses_1", Description: text, Prompt: text, Result: text, Status: task.StatusRunning,
			Progress: task.Progress{LastTools: []string{text}}}
		rec, err := task.AppendJSON(nil, &tk)
		require.NoError(t, err)
		require.Equal(t, SSEFrame(SSETaskUpdated, tk), SSEFrameJSON(SSETaskUpdated, rec), "%q", text)
	}
}
