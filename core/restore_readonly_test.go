package core

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

// A read-only view (asyncagents serve) restores the history as written: a queued task stays
// queued and a running one running, and nothing is asked of OpenCode; the plugin's own restore
// starts the queued task and reconciles the running one.
func TestReadOnlyRestoreStartsNothing(t *testing.T) {
	queued := task.Task{ID: "bg_00000000000000000000a5", Description: "Wait", Prompt: "Later.", BatchID: "msg_3", ParentSessionID: "ses_user",
		ParentMessageID: "msg_1", Agent: "explore", Depth: 1, Status: task.StatusRunning, Queued: true, StartedAt: 1000}
	running := queued
	running.ID, running.SessionID, running.Queued = "bg_00000000000000000000a6", "ses_run", false
	hist := HistoryLine(queued) + HistoryLine(running)
	for _, c := range []struct {
		readOnly bool
		queued   bool
		effects  bool
	}{{true, true, false}, {false, false, true}} {
		m := NewMachine(config.Config{API: config.APIConfig{ReadOnly: c.readOnly}})
		res, effects := m.Restore(2000, hist)
		require.Equal(t, 2, res.Restored)
		got, ok := m.Task(queued.ID)
		require.True(t, ok)
		require.Equal(t, c.queued, got.Queued, "read-only %v", c.readOnly)
		require.Equal(t, c.effects, len(effects) > 0, "read-only %v: %v", c.readOnly, effects)
	}
}
