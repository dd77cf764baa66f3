package task

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A running task waiting for a slot is written with the status queued, and reads back as the
// core keeps it (running, Queued); a line of an earlier release (running, queued: true) reads
// the same.
func TestQueuedIsWrittenAndReadBack(t *testing.T) {
	tk := Task{ID: "bg_1", Status: StatusRunning, Queued: true, Waiting: &Wait{Limit: "maxConcurrentStarts", Max: 2, Position: 1}}
	b, err := AppendJSON(nil, &tk)
	require.NoError(t, err)
	require.True(t, strings.Contains(string(b), `"status":"queued"`), string(b))
	for _, line := range []string{string(b), `{"id":"bg_1","status":"running","queued":true}`} {
		var got Task
		require.NoError(t, json.Unmarshal([]byte(line), &got))
		require.Equal(t, StatusRunning, got.Status, line)
		require.True(t, got.Queued, line)
		require.Equal(t, StatusQueued, got.Shown())
	}
	tk.Queued = false
	b, _ = AppendJSON(nil, &tk)
	require.Contains(t, string(b), `"status":"running"`)
}
