package view

import (
	"math"

	"github.com/asyncagents/asyncagents/core/history"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/core/text"
)

// Timeline is a batch drawn over time, for the dashboard's batch page: one bar per task from its
// launch to its end (or now), with the stretches that held it marked (queued, stalled), so what
// ran in parallel and what held the batch up shows at a glance. Positions are percentages of the
// batch's span, from its first launch to its last end.
type Timeline struct {
	BatchID string `json:"batchId"`
	Name    string `json:"name"`
	// Span is the batch's whole time, as Elapsed writes it.
	Span string `json:"span"`
	Bars []Bar  `json:"bars"`
	// Legend names the segment kinds, in the order a page lists them.
	Legend []LegendItem `json:"legend"`
	Live   bool         `json:"live"`
}

// Bar is one task on the timeline.
type Bar struct {
	ID          string    `json:"id"`
	Description string    `json:"description"`
	Mark        string    `json:"mark"`
	Tone        string    `json:"tone"`
	Elapsed     string    `json:"elapsed"`
	Left        float64   `json:"left"`
	Width       float64   `json:"width"`
	Segments    []Segment `json:"segments"`
}

// Segment is a stretch of a bar: Kind is one of the Segment… kinds; Left and Width are
// percentages of the batch's span, like the bar's; Title says what it was and how long.
type Segment struct {
	Kind  string  `json:"kind"`
	Left  float64 `json:"left"`
	Width float64 `json:"width"`
	Title string  `json:"title"`
}

// LegendItem names a segment kind.
type LegendItem struct {
	Kind  string `json:"kind"`
	Label string `json:"label"`
}

// The segment kinds.
const (
	SegmentQueued     = "queued"
	SegmentStalled    = "stalled"
	SegmentPermission = "permission"
)

// BatchTimeline is the timeline of the batch batchID over all tasks; ok is false when the batch
// has no task.
func BatchTimeline(tasks []*task.Task, batchID string, now int64) (Timeline, bool) {
	var mine []*task.Task
	for _, t := range tasks {
		if t.BatchID == batchID {
			history.Load(t)
			mine = append(mine, t)
		}
	}
	if len(mine) == 0 {
		return Timeline{}, false
	}
	end := func(t *task.Task) int64 { return t.StartedAt + t.Duration(now) }
	first, last := mine[0].StartedAt, end(mine[0])
	for _, t := range mine {
		first, last = min(first, t.StartedAt), max(last, end(t))
	}
	span := max(last-first, 1)
	pct := func(ms int64) float64 { return math.Round(float64(ms)*10000/float64(span)) / 100 }
	tl := Timeline{BatchID: batchID, Name: BatchName(mine), Span: text.Elapsed(last - first), Bars: make([]Bar, 0, len(mine)),
		Legend: []LegendItem{{SegmentQueued, legendQueued}, {SegmentStalled, legendStalled}, {SegmentPermission, legendPermission}}}
	for _, t := range mine {
		r := MakeRow(t, now, Opts{ReadOnly: true})
		tl.Live = tl.Live || !t.Status.Terminal()
		b := Bar{ID: t.ID, Description: t.Description, Mark: r.Mark, Tone: r.Tone, Elapsed: r.Elapsed,
			Left: pct(t.StartedAt - first), Width: pct(end(t) - t.StartedAt), Segments: []Segment{}}
		seg := func(kind string, from, to int64, title func(string) string) {
			if to > from {
				b.Segments = append(b.Segments, Segment{Kind: kind, Left: pct(from - first), Width: pct(to - from), Title: title(text.Elapsed(to - from))})
			}
		}
		switch {
		case t.Queued:
			seg(SegmentQueued, t.StartedAt, end(t), segmentQueued)
		case t.QueuedUntil > 0:
			seg(SegmentQueued, t.StartedAt, t.QueuedUntil, segmentQueued)
		}
		for _, s := range t.Stalls {
			seg(SegmentStalled, s.From, s.To, segmentStalled)
		}
		if since := HoldOf(t).StalledSince; since > 0 {
			seg(SegmentStalled, since, end(t), segmentStalled)
		}
		for _, p := range t.Permissions {
			to := p.RepliedAt
			if p.Reply == "" {
				to = end(t) // still waiting, or the task ended while it waited
			}
			seg(SegmentPermission, p.At, min(to, end(t)), segmentPermission)
		}
		tl.Bars = append(tl.Bars, b)
	}
	return tl, true
}
