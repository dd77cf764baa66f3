package core

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/asyncagents/asyncagents/core/history"
	"github.com/asyncagents/asyncagents/core/task"
)

// RestoreResult says what a history load found.
type RestoreResult struct {
	Restored int      `json:"restored"`
	Corrupt  int      `json:"corrupt"`
	Problems []string `json:"problems,omitempty"` // the first few corrupt lines, by number
	// Indexed is how many of the tasks came from the history index, not from reading their
	// lines (history_index.go).
	Indexed int `json:"indexed,omitempty"`
}

// maxReportedProblems bounds RestoreResult.Problems.
const maxReportedProblems = 10

// Restore loads a history log into an empty machine: the last record of each task wins, corrupt
// lines are skipped and reported. Tasks that were running are reconciled against OpenCode
// (see reconcile); queued ones wait for a slot again. A log much longer than its live tasks is
// compacted.
func (m *Machine) Restore(now int64, hist string) (RestoreResult, []Effect) {
	return m.RestoreIndexed(now, hist, "")
}

// RestoreIndexed is Restore with the history index the log had beside it (history_index.go):
// the part of the log the index describes is not read again. An index that does not describe
// the log is not used: the restore reads the whole log, and gives what it gives with no index.
func (m *Machine) RestoreIndexed(now int64, hist, index string) (RestoreResult, []Effect) {
	m.changes++
	if now > m.now {
		m.now = now
	}
	m.out = nil
	// A compaction below writes the log anew and clears this.
	m.tornTail = hist != "" && !strings.HasSuffix(hist, "\n")
	var res RestoreResult
	covered, lines, newlines := 0, 0, 0
	if index != "" && len(m.tasks) == 0 {
		covered, lines, newlines = m.applyIndex(index, hist, &res)
	}
	_, tailLines, legacy, removals, split := m.applyHistoryFrom(hist, covered, newlines, &res, false, true)
	lines += tailLines
	if removals {
		m.pruneOrder()
	}
	launched := m.sortRestored()
	m.rebuildIndex()
	res.Restored = len(m.tasks)
	m.historyLines = lines
	m.sizeRestored(len(hist))
	if res.Corrupt > 0 {
		m.log("warn", fmt.Sprintf("task history: %d corrupt lines skipped (%s)", res.Corrupt, strings.Join(res.Problems, "; ")))
	}
	switch {
	case m.pruneHistory(false) > 0:
		// Tasks past the history's limits went: the log is rewritten without them.
		res.Restored = len(m.tasks)
		m.compact()
	case legacy > 0:
		// Lines with a CRC-32: the log is rewritten with XXH64 once, so the next restore checks
		// it at the new speed.
		m.compact()
	case m.compactIfWorthIt():
	case tailLines >= indexMinLines && strings.HasSuffix(hist, "\n"):
		// Worth an index: the next restore reads what this one read line by line from it. (A
		// log that does not end its last line is left for the compaction to set right.) Tasks
		// merged from lines that kept fields have no one record to index: the log is compacted,
		// which leaves an index of its own.
		if s := m.restoredSnapshot(hist, launched, lines, newlines+split, res); s != nil {
			m.planIndex(s)
		} else {
			m.compact()
		}
	}
	m.foldMerged(m.merged)
	m.merged = nil
	if !m.cfg.API.ReadOnly {
		// A read-only view (asyncagents serve) shows the history as written: the tasks are
		// another process's, so it starts none and asks OpenCode nothing.
		// What a stop left on the workers is listed as each comes up (workers_worktree_restart.go).
		m.sweepDue = len(m.tasks) > 0
		m.reconcile()
		m.reconcileWorktrees() // isolated tasks' worktrees no task needs (worktree_tasks.go)
		m.restoreOutbox()
	} else {
		m.probeWorkers() // a new instance after a trap gets no start
	}
	out := m.out
	m.out = nil
	return res, out
}

// restoredSnapshot is what the restore just done found, as an index would say it. Its entries
// are in the order the log first named the tasks (launched, as sortRestored returned it), not in
// start order: a restore that reads lines past the index sorts them with the index's tasks, and
// breaks ties in start time by that order as a whole read of the log would.
func (m *Machine) restoredSnapshot(hist string, launched []string, lines, newlines int, res RestoreResult) *indexSnapshot {
	s := &indexSnapshot{log: hist, lines: lines, newlines: newlines, corrupt: res.Corrupt, problems: res.Problems}
	s.entries = make([]indexEntry, 0, len(launched))
	for _, id := range launched {
		if t := m.tasks[id]; t != nil {
			if t.logAt < 0 {
				return nil // a task merged from lines: the compaction leaves an index instead
			}
			s.entries = append(s.entries, snapshotEntry(t, t.logAt, t.logLen))
		}
	}
	return s
}

// sortRestored puts the launch order in start order, as the tasks were launched, and returns the
// order it had before: the order in which the log first named them. A log is nearly always in
// start order already; checking it costs one pass over the tasks, sorting through the map many,
// and the order before is copied only when the sort changes it.
func (m *Machine) sortRestored() (before []string) {
	view := m.apiView()
	sorted := true
	for i := 1; i < len(view) && sorted; i++ {
		sorted = view[i-1].StartedAt <= view[i].StartedAt
	}
	if sorted {
		return m.order
	}
	before = slices.Clone(m.order)
	sort.SliceStable(view, func(i, j int) bool { return view[i].StartedAt < view[j].StartedAt })
	for i, t := range view {
		m.order[i] = t.ID
	}
	m.view, m.viewTasks = view, nil
	return before
}

// applyHistory applies a log's records in order (the last record of a task wins) and returns
// how many non-empty lines there were, how many of them carry a CRC-32, whether any record
// removed a task and, when track is set, the IDs the records touched, in order of first touch.
// With lazy, finished tasks are read as far as their head (core/history/lazy.go). Corrupt lines are
// counted and reported in res.
func (m *Machine) applyHistory(hist string, res *RestoreResult, track, lazy bool) (touched []string, lines, legacy int, removals bool) {
	touched, lines, legacy, removals, _ = m.applyHistoryFrom(hist, 0, 0, res, track, lazy)
	return touched, lines, legacy, removals
}

// applyHistoryFrom is applyHistory on history[from:], whose first line is line number
// firstLine+1 of the log, and also returns how many lines it split history[from:] into (its
// newlines, when it ends with one). Each task's record is noted where it is in history
// (Task.logAt).
func (m *Machine) applyHistoryFrom(hist string, from, firstLine int, res *RestoreResult, track, lazy bool) (touched []string, lines, legacy int, removals bool, split int) {
	base := uintptr(unsafe.Pointer(unsafe.StringData(hist)))
	var seen map[string]bool
	if track {
		seen = map[string]bool{}
	}
	all := history.SplitLines(hist[from:])
	if len(m.tasks) == 0 {
		// Sized once: growing a map of 10,000 tasks rehashes it a dozen times.
		m.tasks = make(map[string]*run, len(all))
	}
	var slab taskSlab
	for n, line := range all {
		if line == "" {
			continue
		}
		lines++
		var into *run
		var intoTask *task.Task
		if lazy {
			into = slab.next()
			intoTask = &into.Task
		}
		r, old, err := history.ParseLineInto(line, lazy, intoTask)
		if into != nil && (err != nil || r.Task != intoTask) {
			slab.giveBack(into)
			into = nil
		}
		if err == nil && r.Keep != "" {
			err = applyKept(r.Task, r.Keep, m.tasks[r.Task.ID])
		}
		if old && err == nil {
			legacy++
		}
		if err != nil {
			res.Corrupt++
			if len(res.Problems) < maxReportedProblems {
				res.Problems = append(res.Problems, fmt.Sprintf("line %d: %v", firstLine+n+1, err))
			}
			continue
		}
		id := r.Removed
		if id != "" {
			delete(m.tasks, id)
			removals = true
		} else {
			t := into
			if t == nil {
				t = &run{Task: *r.Task}
			}
			id = t.ID
			was, known := m.tasks[id]
			switch {
			case !known:
				m.order = append(m.order, id)
			case track && was != nil:
				// Following: the streams were told of the task before this record.
				t.sseSent = was.sseSent
			case t == into && was != nil:
				// A newer record of a task: read over the older in place, and the slot it was
				// read into serves the next line (no one holds a restoring task yet).
				*was = *t
				slab.giveBack(t)
				t = was
			}
			if !track {
				// A restore: the event streams start from the status restored.
				t.sseSent = t.Status
			}
			if t.Progress.LastTools == nil && !t.Lazy() {
				t.Progress.LastTools = []string{} // a head only: history.Load does this
			}
			// The record is the line after its checksum and space.
			t.logAt, t.logLen = int(uintptr(unsafe.Pointer(unsafe.StringData(line)))-base)+17, len(line)-17
			t.recordBytes = 0 // its record's, at the restore's end (sizeRestored)
			if r.Keep != "" {
				t.logAt = -1 // merged with the lines before: no one record is the task
				t.recordBytes = len(line) + len(t.Prompt) + len(t.Result)
			}
			m.tasks[id] = t
		}
		if track && !seen[id] {
			seen[id] = true
			touched = append(touched, id)
		}
	}
	if lines > 0 {
		m.storeChanged() // the records may have added, removed or replaced tasks
		m.sessionsStale = true
	}
	return touched, lines, legacy, removals, len(all)
}

// taskSlab hands out the tasks a restore reads, cut from blocks of taskSlabSize: inside
// WebAssembly in Bun, allocating 10,000 tasks one by one cost more than reading their records.
type taskSlab struct {
	block []run
	used  int
}

const taskSlabSize = 256

func (s *taskSlab) next() *run {
	if s.used == len(s.block) {
		s.block, s.used = make([]run, taskSlabSize), 0
	}
	s.used++
	return &s.block[s.used-1]
}

// giveBack clears t, the last task handed out, and hands it out again next.
func (s *taskSlab) giveBack(t *run) {
	*t = run{}
	if s.used > 0 && &s.block[s.used-1] == t {
		s.used--
	}
}

// pruneOrder drops the IDs of removed tasks from the launch order. An ID named twice is a task
// removed and written again: it keeps its last place, the one a log that no longer held its
// first record (a compacted one, or the index of one read so far) would give it.
func (m *Machine) pruneOrder() {
	kept := make(map[string]bool, len(m.tasks))
	keep := make([]bool, len(m.order))
	for i := len(m.order) - 1; i >= 0; i-- {
		if id := m.order[i]; m.tasks[id] != nil && !kept[id] {
			kept[id], keep[i] = true, true
		}
	}
	order := m.order[:0]
	for i, id := range m.order {
		if keep[i] {
			order = append(order, id)
		}
	}
	m.order = order
	m.storeChanged()
}
