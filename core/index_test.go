package core

import (
	"fmt"
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// rebuildIndex, which takes a batch's side-by-side tasks as one run, builds the index that
// indexing each task in launch order builds, when batches interleave too.
func TestRebuildIndexMatchesTaskByTask(t *testing.T) {
	var log strings.Builder
	batches := []string{"a", "a", "b", "a", "c", "c", "b", "d", "d", "d"}
	statuses := []task.Status{task.StatusCompleted, task.StatusRunning, task.StatusError, task.StatusCompleted, task.StatusResumed}
	for i, b := range batches {
		log.WriteString(HistoryLine(task.Task{ID: fmt.Sprintf("ses_%02d", i), BatchID: b, Status: statuses[i%len(statuses)], StartedAt: int64(i), Agent: "general"}))
	}
	m := NewMachine(config.Config{})
	m.Restore(100, log.String())
	want := taskIndex{}
	saved := m.index
	m.index = want
	for _, tk := range m.apiView() {
		m.indexTask(tk)
	}
	want, m.index = m.index, saved
	require.Equal(t, want.batches, m.index.batches)
	require.Equal(t, want.active, m.index.active)
	require.Equal(t, want.activeSet, m.index.activeSet)
	require.Equal(t, []string{"ses_00", "ses_01", "ses_03"}, m.index.batches["a"])
}
