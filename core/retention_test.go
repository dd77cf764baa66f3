package core

import (
	"fmt"
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

func taskIDs(ts []task.Task) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

func sessionIDs(ts []task.Task) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.SessionID)
	}
	return out
}

// Past history.maxTasks the oldest finished tasks go as tasks finish, each with a removal line;
// a task still at work is kept however old.
func TestHistoryMaxTasksWhileRunning(t *testing.T) {
	h := newFB(t, config.Config{History: config.HistoryConfig{MaxTasks: 3}})
	first := h.launch() // stays at work throughout
	var done []string
	for i := 0; i < 5; i++ {
		id := h.launch()
		h.answer(id, "", "ok")
		done = append(done, id)
	}
	require.Equal(t, []string{first, done[3], done[4]}, sessionIDs(h.m.Tasks()))
	var removed int
	for _, e := range h.effects {
		if e.Kind == EffectHistoryAppend && strings.Contains(e.Line, `"removed"`) {
			removed++
		}
	}
	require.Equal(t, 3, removed)

	// Behind the task at work, the order keeps gone IDs only up to its slack.
	for i := 0; i < 3*orderSlack; i++ {
		h.answer(h.launch(), "", "ok")
	}
	require.Len(t, h.m.Tasks(), 3)
	require.LessOrEqual(t, len(h.m.order), 2*3+orderSlack)
}

// At start, finished tasks older than history.maxAgeDays and those past maxTasks are dropped,
// and the log is rewritten without them; a running one is kept.
func TestHistoryLimitsAtRestore(t *testing.T) {
	now := int64(100 * dayMs)
	var b strings.Builder
	add := func(id string, status task.Status, startedAt int64) {
		b.WriteString(HistoryLine(task.Task{ID: id, SessionID: id, ParentSessionID: "ses_p", Description: id, Agent: "general",
			Status: status, StartedAt: startedAt, CompletedAt: startedAt + 1000}))
	}
	add("ses_old_running", task.StatusRunning, now-60*dayMs)
	add("ses_old", task.StatusCompleted, now-40*dayMs)
	for i := 0; i < 4; i++ {
		add(fmt.Sprintf("ses_new%d", i), task.StatusCompleted, now-dayMs+int64(i))
	}
	m := NewMachine(config.Config{History: config.HistoryConfig{MaxTasks: 4, MaxAgeDays: 30}})
	res, effects := m.Restore(now, b.String())
	require.Equal(t, []string{"ses_old_running", "ses_new1", "ses_new2", "ses_new3"}, taskIDs(m.Tasks()))
	require.Equal(t, 4, res.Restored)
	rewrites := ofKind(effects, EffectHistoryRewrite)
	require.Len(t, rewrites, 1)
	require.NotContains(t, rewrites[0].Content, "ses_old\"")
	require.NotContains(t, rewrites[0].Content, "ses_new0")

	// Within the limits nothing goes and nothing is rewritten.
	m = NewMachine(config.Config{History: config.HistoryConfig{MaxAgeDays: 100}})
	_, effects = m.Restore(now, b.String())
	require.Len(t, m.Tasks(), 6)
	require.Empty(t, ofKind(effects, EffectHistoryRewrite))
}
