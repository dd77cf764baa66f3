package core

import (
	"fmt"
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// A follower fed a log in pieces ends with the same tasks as a restore of the whole log, and
// emits one SSE frame per task a piece changed, named as the change was.
func TestFollowMatchesRestoreAndEmitsFrames(t *testing.T) {
	_, log := historyRun(t, 6)
	lines := strings.SplitAfter(log, "\n")
	f := NewMachine(config.Config{})
	var frames []string
	for i := 0; i < len(lines); i += 2 {
		end := min(i+2, len(lines))
		res, effects := f.Follow(int64(i), strings.Join(lines[i:end], ""), false)
		require.Zero(t, res.Corrupt)
		for _, e := range effects {
			require.Equal(t, EffectSSEBroadcast, e.Kind, "a follower only broadcasts")
			frames = append(frames, e.Frame)
		}
	}
	r := NewMachine(config.Config{})
	r.Restore(1e6, log)
	require.Equal(t, r.Tasks(), f.Tasks())
	created, completed := 0, 0
	for _, fr := range frames {
		switch {
		case strings.HasPrefix(fr, "event: task.created\n"):
			created++
		case strings.HasPrefix(fr, "event: task.completed\n"):
			completed++
		}
	}
	require.Equal(t, 6, created)
	require.Equal(t, 6, completed)
}

// After a compaction the host reads the whole log with replace: tasks it no longer holds go,
// and tasks whose status did not change send no frame.
func TestFollowReplaceDropsRemovedTasks(t *testing.T) {
	_, log := historyRun(t, 3)
	f := NewMachine(config.Config{})
	f.Follow(1, log, false)
	require.Len(t, f.Tasks(), 3)
	kept := strings.SplitAfter(log, "\n")
	var onlyLast strings.Builder
	for _, l := range kept {
		if strings.Contains(l, `"sessionID":"ses_00002"`) {
			onlyLast.WriteString(l)
		}
	}
	res, effects := f.Follow(2, onlyLast.String(), true)
	require.Equal(t, 1, res.Restored)
	require.Len(t, f.Tasks(), 1)
	require.Equal(t, "ses_00002", f.Tasks()[0].SessionID)
	require.Empty(t, effects, "an unchanged status is not news")
}

// A corrupt line costs that line alone and is counted.
func TestFollowSkipsCorruptLines(t *testing.T) {
	_, log := historyRun(t, 2)
	res, _ := NewMachine(config.Config{}).Follow(1, "deadbeef {\"task\":{}}\n"+log+"garbage\n", false)
	require.Equal(t, 2, res.Corrupt)
	require.Equal(t, 2, res.Restored)
}

// More task changes in one call than a stream may hold become one resync frame: the hosts drop a
// subscriber StreamBufferFrames behind, so a burst must never reach them frame by frame. A burst
// within the bound keeps its frames.
func TestABurstOfChangesIsOneResyncFrame(t *testing.T) {
	var burst strings.Builder
	for i := 0; i < 1000; i++ {
		burst.WriteString(HistoryLine(task.Task{ID: fmt.Sprintf("bg_%022d", i), ParentSessionID: "ses_p", ParentMessageID: "m", BatchID: "m",
			Description: "job", Prompt: "p", Agent: "general", Status: task.StatusRunning, StartedAt: int64(1000 + i), Depth: 1}))
	}
	for _, c := range []struct {
		lines, frames int
		resync        bool
	}{{MaxTaskFramesPerCall, MaxTaskFramesPerCall, false}, {MaxTaskFramesPerCall + 1, 1, true}, {1000, 1, true}} {
		f := NewMachine(config.Config{})
		lines := strings.SplitAfter(burst.String(), "\n")[:c.lines]
		res, effects := f.Follow(2000, strings.Join(lines, ""), false)
		require.Equal(t, c.lines, res.Restored)
		var frames []string
		for _, e := range effects {
			if e.Kind == EffectSSEBroadcast {
				frames = append(frames, e.Frame)
			}
		}
		require.Len(t, frames, c.frames, "%d changes", c.lines)
		require.Equal(t, c.resync, strings.HasPrefix(frames[0], "event: resync\ndata: {\"changed\":"), frames[0])
	}
}

// A step's own changes (a cancel of many, a parent deleted) are bounded the same way.
func TestAStepsFramesAreCoalescedPastTheBound(t *testing.T) {
	frames := make([]Effect, MaxTaskFramesPerCall+5)
	for i := range frames {
		frames[i] = Effect{Kind: EffectSSEBroadcast, Frame: "event: task.updated\ndata: {}\n\n"}
	}
	require.Len(t, coalesceFrames(frames[:MaxTaskFramesPerCall]), MaxTaskFramesPerCall)
	got := coalesceFrames(frames)
	require.Len(t, got, 1)
	require.Equal(t, "event: resync\ndata: {\"changed\":37}\n\n", got[0].Frame)
}
