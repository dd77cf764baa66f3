package view

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
)

func TestBatchTimeline(t *testing.T) {
	tasks := []*task.Task{
		// launched at 0, ran 0..100 s.
		{ID: "a", BatchID: "b1", Description: "Alpha", Status: task.StatusCompleted, StartedAt: 0, CompletedAt: 100_000},
		// launched at 0, queued until 40 s, stalled 60..80 s, waited for permission 100..140 s,
		// ended at 200 s.
		{ID: "b", BatchID: "b1", Description: "Beta", Status: task.StatusError, StartedAt: 0, QueuedUntil: 40_000,
			Stalls:      []task.Span{{From: 60_000, To: 80_000}},
			Permissions: []task.PermissionRequest{{ID: "p", Permission: "bash", At: 100_000, Reply: "once", RepliedAt: 140_000}}, CompletedAt: 200_000},
		// launched at 50 s, still running at 150 s, stalled since 120 s.
		{ID: "c", BatchID: "b1", Description: "Gamma", Status: task.StatusRunning, StartedAt: 50_000, StalledSince: 120_000},
		{ID: "x", BatchID: "other", Description: "Elsewhere", Status: task.StatusRunning, StartedAt: 0},
	}
	tl, ok := BatchTimeline(tasks, "b1", 150_000)
	require.True(t, ok)
	require.Equal(t, "Alpha, Beta +1 more", tl.Name)
	require.Equal(t, "3m20s", tl.Span, "from the first launch to the last end")
	require.True(t, tl.Live)
	require.Len(t, tl.Bars, 3)

	a, b, c := tl.Bars[0], tl.Bars[1], tl.Bars[2]
	require.Equal(t, Bar{ID: "a", Description: "Alpha", Mark: "✓", Tone: "success", Elapsed: "1m40s", Left: 0, Width: 50, Segments: []Segment{}}, a)
	require.Equal(t, []Segment{
		{Kind: "queued", Left: 0, Width: 20, Title: "queued for 40s"},
		{Kind: "stalled", Left: 30, Width: 10, Title: "stalled for 20s"},
		{Kind: "permission", Left: 50, Width: 20, Title: "waited for permission for 40s"},
	}, b.Segments)
	require.Equal(t, 100.0, b.Width)
	require.Equal(t, "✗", b.Mark)
	require.Equal(t, 25.0, c.Left)
	require.Equal(t, 50.0, c.Width, "a running task reaches now")
	require.Equal(t, []Segment{{Kind: "stalled", Left: 60, Width: 15, Title: "stalled for 30s"}}, c.Segments, "the stall still on")

	// A task still queued is queued all along its bar.
	q := []*task.Task{{ID: "q", BatchID: "b2", Status: task.StatusRunning, Queued: true, StartedAt: 10}}
	tq, _ := BatchTimeline(q, "b2", 1010)
	require.Equal(t, []Segment{{Kind: "queued", Left: 0, Width: 100, Title: "queued for 1s"}}, tq.Bars[0].Segments)

	_, ok = BatchTimeline(tasks, "none", 0)
	require.False(t, ok)
}
