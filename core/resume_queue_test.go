package core

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

// A resume takes a start slot like a launch: with maxConcurrentStarts 1 taken by another task it
// waits, queued with its session, says so in its answer, and its follow-up goes when the slot
// frees; a model's own limit holds it back the same way.
func TestResumeWaitsForASlot(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  config.Config
	}{
		{"maxConcurrentStarts", config.Config{MaxConcurrentStarts: 1}},
		{"per model", config.Config{Concurrency: config.ConcurrencyConfig{Default: 1}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newFB(t, c.cfg)
			first := h.launch()
			h.busy(first)
			h.answer(first, "", "first answer")
			require.Equal(t, task.StatusCompleted, h.status(first))
			other := h.launch()
			require.False(t, h.m.task(other).Queued, "the other task holds the slot")

			eff := h.resume(first, "FOLLOW UP")
			require.Empty(t, prompts(eff, first), "no follow-up while the slot is taken")
			reply := ofKind(eff, EffectToolReply)
			require.Len(t, reply, 1)
			require.Contains(t, reply[0].Output, "waits for a start slot")
			require.True(t, h.m.task(first).Queued)
			require.Equal(t, task.StatusResumed, h.status(first))

			h.busy(other)
			before := len(h.effects)
			h.answer(other, "", "other done")
			sent := prompts(h.effects[before:], first)
			require.Len(t, sent, 1, "the slot freed: the follow-up goes")
			require.Equal(t, "FOLLOW UP", sent[0].Parts[0].Text)
			require.False(t, h.m.task(first).Queued)
		})
	}
}

// A resume that waited for a slot when the process stopped fails at the restore with a reason:
// its follow-up lived in that process only.
func TestQueuedResumeLostInARestart(t *testing.T) {
	h := newFB(t, config.Config{MaxConcurrentStarts: 1})
	first := h.launch()
	h.busy(first)
	h.answer(first, "", "first answer")
	h.launch()
	h.resume(first, "FOLLOW UP")
	m := NewMachine(config.Config{MaxConcurrentStarts: 1})
	m.Restore(h.now+1000, HistoryLine(h.m.task(first).Task))
	tk, _ := m.Task(first)
	require.Equal(t, task.StatusError, tk.Status)
	require.Equal(t, "ResumeLost", tk.Error.Name)
}
