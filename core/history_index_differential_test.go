package core

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/history"
	"github.com/asyncagents/asyncagents/core/internal/tasktest"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// randomHistoryLines writes n random history lines over a pool of ids: records in every status
// (queued ones too), start times drawn from a few values (ties), removals, corrupt and empty
// lines.
func randomHistoryLines(r *rand.Rand, n, pool int) string {
	statuses := []task.Status{task.StatusCompleted, task.StatusError, task.StatusCancelled, task.StatusRunning, task.StatusResumed}
	var b strings.Builder
	for range n {
		switch k := r.Intn(100); {
		case k < 3:
			b.WriteString("0123456789abcdef {\"task\":torn}\n")
		case k < 5:
			b.WriteString("\n")
		case k < 9:
			b.WriteString(history.Line(history.Record{Removed: fmt.Sprintf("ses_%03d", r.Intn(pool))}))
		default:
			st := statuses[r.Intn(len(statuses))]
			t := task.Task{ID: fmt.Sprintf("ses_%03d", r.Intn(pool)), ParentSessionID: "ses_parent", ParentMessageID: "msg",
				BatchID: fmt.Sprintf("batch_%d", r.Intn(6)), Description: fmt.Sprintf("d%d", r.Intn(50)),
				Prompt: "p", Agent: "build", Status: st, StartedAt: int64(1000 * (1 + r.Intn(5))), Depth: 1}
			if st.Terminal() {
				t.CompletedAt = t.StartedAt + 5
				t.Result = "r"
			} else {
				t.Queued = r.Intn(3) == 0
			}
			b.WriteString(HistoryLine(t))
		}
	}
	return b.String()
}

func sameRestore(t *testing.T, whole, indexed *Machine, wantRes, gotRes RestoreResult) {
	t.Helper()
	gotRes.Indexed = 0
	require.Equal(t, wantRes, gotRes)
	require.Equal(t, whole.order, indexed.order, "launch order")
	require.Equal(t, whole.historyLines, indexed.historyLines)
	require.Equal(t, whole.Tasks(), indexed.Tasks())
	for _, req := range sameAnswerRequests("ses_001") {
		require.Equal(t, whole.ServeHTTP(req, tasktest.APIConfig, tasktest.Now+5), indexed.ServeHTTP(req, tasktest.APIConfig, tasktest.Now+5), "%s?%s", req.Path, req.Query)
	}
}

// restoresAgree restores log whole and with index, checks (as subtest name) that both give the
// same, and returns whether the index was used and the indexed restore's machine and effects.
func restoresAgree(t *testing.T, name, log, index string) (used bool, indexed *Machine, eff []Effect) {
	whole := NewMachine(config.Config{})
	indexed = NewMachine(config.Config{})
	wantRes, _ := whole.Restore(tasktest.Now, log)
	gotRes, eff := indexed.RestoreIndexed(tasktest.Now, log, index)
	t.Run(name, func(t *testing.T) { sameRestore(t, whole, indexed, wantRes, gotRes) })
	return gotRes.Indexed > 0, indexed, eff
}

// An index left by a restore (and a second one left by a restore that used it) gives what the
// whole log gives, launch order included, for random logs: tasks written twice, removed and
// written again, ties in start time, corrupt and empty lines, lines past the index.
func TestAnIndexRestoresAsTheWholeLogOfARandomHistory(t *testing.T) {
	const seeds = 200
	used, chained := 0, 0
	for seed := range seeds {
		r := rand.New(rand.NewSource(int64(seed)))
		prefix := randomHistoryLines(r, 260+r.Intn(60), 220)
		first := NewMachine(config.Config{})
		_, eff := first.Restore(tasktest.Now, prefix)
		index := indexFrom(t, first, eff)
		if index == "" {
			continue
		}
		tail := randomHistoryLines(r, r.Intn(2)*(r.Intn(40)+300*r.Intn(2)), 300)
		log := prefix + tail
		ok, indexed, gotEff := restoresAgree(t, fmt.Sprintf("seed%d", seed), log, index)
		if ok {
			used++
		}
		index2 := indexFrom(t, indexed, gotEff)
		if index2 == "" {
			continue
		}
		chained++
		restoresAgree(t, fmt.Sprintf("seed%d-chained", seed), log+randomHistoryLines(r, r.Intn(30), 220), index2)
	}
	t.Logf("indexes used: %d, chained: %d", used, chained)
	require.Greater(t, used, seeds*3/4, "most seeds test an index that is used")
}

// historySim writes history as the core would: launch times from a clock that never goes back,
// a queued task's start time moved to the clock when it starts, finished tasks resumed or
// forgotten (never seen again), a few corrupt and empty lines.
type historySim struct {
	r     *rand.Rand
	clock int64
	next  int
	live  []*task.Task
}

func (s *historySim) lines(n int) string {
	var b strings.Builder
	write := func(t *task.Task) { b.WriteString(HistoryLine(*t)) }
	for range n {
		if s.r.Intn(3) > 0 {
			s.clock += 1000
		}
		switch k := s.r.Intn(100); {
		case k < 2:
			b.WriteString("0123456789abcdef {\"task\":torn}\n")
		case k < 4:
			b.WriteString("\n")
		case k < 70 || len(s.live) == 0:
			for range 1 + s.r.Intn(3) {
				t := &task.Task{ID: fmt.Sprintf("ses_%04d", s.next), ParentSessionID: "ses_parent", ParentMessageID: "msg",
					BatchID: fmt.Sprintf("batch_%d", s.next/3), Description: "d", Prompt: "p", Agent: "build",
					Status: task.StatusRunning, StartedAt: s.clock, Depth: 1, Queued: s.r.Intn(3) == 0}
				s.next++
				s.live = append(s.live, t)
				write(t)
			}
		default:
			i := s.r.Intn(len(s.live))
			t := s.live[i]
			switch {
			case t.Queued:
				t.Queued, t.StartedAt = false, s.clock
			case !t.Status.Terminal():
				t.Status, t.CompletedAt, t.Result = []task.Status{task.StatusCompleted, task.StatusError, task.StatusCancelled}[s.r.Intn(3)], s.clock, "r"
			case s.r.Intn(3) == 0:
				b.WriteString(history.Line(history.Record{Removed: t.ID}))
				s.live = append(s.live[:i], s.live[i+1:]...)
				continue
			default:
				t.Status = task.StatusResumed
			}
			write(t)
		}
	}
	return b.String()
}

// The same for histories written as the core writes them (historySim above).
func TestAnIndexRestoresAsTheWholeLogOfARealisticHistory(t *testing.T) {
	const seeds = 150
	used := 0
	for seed := range seeds {
		s := &historySim{r: rand.New(rand.NewSource(int64(seed))), clock: 1_700_000_000_000}
		prefix := s.lines(300)
		first := NewMachine(config.Config{})
		_, eff := first.Restore(tasktest.Now, prefix)
		index := indexFrom(t, first, eff)
		if index == "" {
			continue
		}
		log := prefix + s.lines(s.r.Intn(60))
		if ok, _, _ := restoresAgree(t, fmt.Sprintf("seed%d", seed), log, index); ok {
			used++
		}
	}
	t.Logf("indexes used: %d", used)
	require.Greater(t, used, seeds*3/4, "most seeds test an index that is used")
}

// The same for the index a compaction leaves.
func TestACompactionsIndexRestoresAsTheWholeLog(t *testing.T) {
	const seeds = 120
	used := 0
	for seed := range seeds {
		r := rand.New(rand.NewSource(int64(seed)))
		log0 := randomHistoryLines(r, 900, 300)
		first := NewMachine(config.Config{})
		_, eff := first.Restore(tasktest.Now, log0)
		var rewrite string
		for _, e := range eff {
			if e.Kind == EffectHistoryRewrite {
				rewrite = e.Content
			}
		}
		index := indexFrom(t, first, eff)
		if rewrite == "" || index == "" {
			continue
		}
		log := rewrite + randomHistoryLines(r, r.Intn(50), 300)
		if ok, _, _ := restoresAgree(t, fmt.Sprintf("seed%d", seed), log, index); ok {
			used++
		}
	}
	t.Logf("indexes used: %d", used)
	require.Greater(t, used, seeds*3/4, "most seeds test an index that is used")
}

// Two queued tasks started at the same millisecond, one start on each side of the lines an
// index covers (another process's restore read the log between them): the indexed restore keeps
// them in the whole read's order. An index that held the launch order after sortRestored, not
// the log's, broke the tie the other way.
func TestAnIndexKeepsTheLogsOrderForTiedStarts(t *testing.T) {
	tk := func(id string, at int64, st task.Status, queued bool) task.Task {
		return task.Task{ID: id, ParentSessionID: "ses_parent", ParentMessageID: "msg", BatchID: "b_" + id, Description: id,
			Prompt: "p", Agent: "build", Status: st, StartedAt: at, Depth: 1, Queued: queued}
	}
	var prefix strings.Builder
	prefix.WriteString(HistoryLine(tk("ses_a", 1000, task.StatusRunning, true))) // A launched, queued
	for i := range 300 {
		done := tk(fmt.Sprintf("ses_f%03d", i), 2000+int64(i), task.StatusCompleted, false)
		done.CompletedAt = done.StartedAt + 1
		prefix.WriteString(HistoryLine(done))
	}
	prefix.WriteString(HistoryLine(tk("ses_b", 3000, task.StatusRunning, true)))  // B launched, queued
	prefix.WriteString(HistoryLine(tk("ses_a", 5000, task.StatusRunning, false))) // A starts at 5000
	tail := HistoryLine(tk("ses_b", 5000, task.StatusRunning, false))             // B starts at 5000 too

	first := NewMachine(config.Config{})
	_, eff := first.Restore(tasktest.Now, prefix.String())
	index := indexFrom(t, first, eff)
	require.NotEmpty(t, index)

	log := prefix.String() + tail
	whole, indexed := NewMachine(config.Config{}), NewMachine(config.Config{})
	wantRes, _ := whole.Restore(tasktest.Now, log)
	gotRes, _ := indexed.RestoreIndexed(tasktest.Now, log, index)
	require.NotZero(t, gotRes.Indexed)
	last2 := func(m *Machine) []string { return m.order[len(m.order)-2:] }
	require.Equal(t, []string{"ses_a", "ses_b"}, last2(whole))
	require.Equal(t, last2(whole), last2(indexed), "launch order of two tasks started in the same ms")
	_ = wantRes
}
