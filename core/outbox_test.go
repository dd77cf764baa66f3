package core

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A notice OpenCode keeps refusing is tried again after 1 s, then twice as long each time up to a
// minute, ten tries in all; then the process gives up on it, but the history still owes it, and
// the next start delivers it once.
func TestRefusedNoticeBacksOffAndStaysOwed(t *testing.T) {
	w, _ := crashScenario{tasks: 1, refuse: 1000}.play(t, -1)
	require.Equal(t, []int64{1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000}, w.retries)
	require.Contains(t, w.logs[len(w.logs)-1], "error: could not deliver the notice of task "+w.m.order[0])
	require.Contains(t, w.logs[len(w.logs)-1], "gave up after 10 tries")
	id := w.m.order[0]
	require.Zero(t, w.noticesOf(id))
	tk, _ := w.m.Task(id)
	require.NotZero(t, tk.NoticeOwed, "still owed")

	w.refuse = 0
	w.restart()
	w.settle(-1)
	require.Equal(t, 1, w.noticesOf(id), "the next start delivers it")
	tk, _ = w.m.Task(id)
	require.Zero(t, tk.NoticeOwed)
}

// The notices ready for one parent when a step ends go as one message: a batch's notices held
// while the parent was busy and the last one, which wakes it.
func TestNoticesReadyTogetherGoAsOneMessage(t *testing.T) {
	w, _ := crashScenario{tasks: 3, parentBusy: true}.play(t, -1)
	require.Len(t, w.parent, 1, "one message for the three notices")
	for _, id := range w.m.order {
		require.Equal(t, 1, w.noticesOf(id))
		require.True(t, w.wokeBy[id], "the message wakes the parent: the batch is done")
	}
}
