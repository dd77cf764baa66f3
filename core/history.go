package core

import (
	"sort"
	"strings"

	"github.com/asyncagents/asyncagents/core/history"
	"github.com/asyncagents/asyncagents/core/httpapi"
	"github.com/asyncagents/asyncagents/core/task"
)

// Task history: every task change is appended to a log as one line, `<xxh64> <json>\n`, where
// the JSON is the task (or {"removed": id}) and the checksum (16 hex digits, core/internal/xxh64) covers
// the JSON. Lines from before XXH64 carry a CRC-32 (8 hex digits); they are read as they are,
// and a restore that finds any rewrites the log in the new form once. Appending one line
// costs the same whatever the history's size; a torn or corrupt line loses that line alone (a
// log restored with a torn last line gets a newline before the next line appended to it). The
// effects that persist a step's changes come first in the step's effects, so a host that carries
// them out in order has written a task's result before it tells anyone about it.
//
// The core decides what is written and when the log is worth compacting; hosts only append,
// rewrite (write a temporary file and rename it over the log) and read.

// Effect kinds for the history.
const (
	EffectHistoryAppend  = "history.append"  // Line: append it as it is (it ends with its newline)
	EffectHistoryRewrite = "history.rewrite" // Content: replace the whole log atomically
)

// touch marks a task changed in this step; the step ends by persisting it.
func (m *Machine) touch(t *run) {
	if m.dirty == nil {
		m.dirty = map[string]bool{}
	}
	m.dirty[t.ID] = true
}

// forget removes a task from the store and persists the removal.
func (m *Machine) forget(id string) {
	if t := m.tasks[id]; t != nil {
		m.size.liveBytes -= t.recordBytes
	}
	delete(m.tasks, id)
	m.storeChanged()
	if m.dirty == nil {
		m.dirty = map[string]bool{}
	}
	m.dirty[id] = true
}

// taskLine is t's history record (read whole first, if a restore read only its head).
func taskLine(t *run) string {
	c := t.public()
	return history.Line(history.Record{Task: &c})
}

// HistoryLine is a task's history record as the core writes it, for tests and benchmarks that
// build a history without running the tasks.
func HistoryLine(t task.Task) string { return taskLine(&run{Task: t}) }

// ChecksummedLine is a history line for a record's JSON as given (for tests that write a record
// of an earlier release by hand).
func ChecksummedLine(recordJSON string) string { return history.Checksummed([]byte(recordJSON)) }

// persistDirty ends a step: the notices ready are sent (outbox.go), ahead of the step's other
// effects, and the step's changed tasks become append effects placed before all of them.
//
// A notice goes ahead of the rest because what else a step sends is mostly work for OpenCode
// (the next queued child's session and prompt, when a child's end frees its slot), and OpenCode
// starts on requests in the order they come: a notice behind a child's start waits for it.
//
// A step whose notices would tell of changes it writes ends with a sync instead, and the notices
// wait for its answer (storage_fault.go); the step's work for OpenCode waits with them, to go
// after them. While the history cannot be written, nothing is
// appended: the changed tasks are held in memory, and the retry rewrites them all.
func (m *Machine) persistDirty() {
	sync := m.wantsSync()
	if sync || m.store.syncing > 0 {
		m.holdBehindNotices()
	}
	if !sync {
		before := len(m.out)
		m.flushOutbox()
		if sent := len(m.out) - before; sent > 0 && before > 0 {
			m.out = append(m.out[before:len(m.out):len(m.out)], m.out[:before]...)
		}
	}
	frames := m.progressFrames()
	if len(m.dirty) == 0 {
		m.out = append(coalesceFrames(frames), m.out...)
		m.armProgress()
		return
	}
	held := m.store.fault != ""
	ids := make([]string, 0, len(m.dirty))
	for id := range m.dirty {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	m.dirty = nil
	framed := m.progressFramed
	m.progressFramed = nil
	var appends []Effect
	for _, id := range ids {
		var line string
		if !held {
			delete(m.progressHeld, id) // its line holds its progress
		}
		if t := m.tasks[id]; t != nil {
			pub := t.public()
			if m.streamsListen() && !framed[id] {
				frames = append(frames, m.taskFrameOf(t, pub))
			}
			t.sseSent = t.Status
			if !held {
				keep, keptBytes := keepFields(t, &pub)
				line = taskRecordLine(&pub, keep)
				m.size.wrote(t, len(line), len(line)+keptBytes)
			}
		} else if !held {
			line = history.Line(history.Record{Removed: id})
			m.size.logBytes += len(line)
		}
		if held {
			continue
		}
		// History effects never get a reply, so they take no ID (0): the IDs of the step's
		// other effects stay as they would be without persistence.
		if m.tornTail {
			// The log restored ends in a torn line: this newline ends it, so the torn line alone
			// is lost and this one is read whole.
			line = "\n" + line
			m.tornTail = false
		}
		appends = append(appends, Effect{Kind: EffectHistoryAppend, Line: line})
		m.historyLines++
	}
	m.out = append(append(appends, coalesceFrames(frames)...), m.out...)
	if sync {
		m.requestSync(false)
	}
	if !held {
		m.compactIfWorthIt()
	}
	m.armProgress()
}

// taskFrameOf is the event streams' frame of t's change (pub is t.public()), named by what the
// streams were last told of t.
func (m *Machine) taskFrameOf(t *run, pub task.Task) Effect {
	prev, known := t.sseSent, t.sseSent != ""
	t.sseSent = t.Status
	return Effect{Kind: EffectSSEBroadcast, Frame: taskFrame(httpapi.TaskEventName(prev, t.Status, !known), pub, m.now)}
}

// taskFrame is the event stream's frame of a task's change: the task as the API shows it
// (httpapi.Shown, with its view), not as the history keeps it.
func taskFrame(event string, pub task.Task, now int64) string {
	httpapi.Shown(&pub, now)
	rec, _ := task.AppendJSON(nil, &pub)
	return httpapi.SSEFrameJSON(event, rec)
}

// coalesceFrames is frames, or one resync frame when they are more than MaxTaskFramesPerCall:
// the hosts drop a subscriber StreamBufferFrames behind, and a thousand tasks changing at once
// would drop every one. A client reads the tasks again on a resync.
func coalesceFrames(frames []Effect) []Effect {
	if len(frames) <= MaxTaskFramesPerCall {
		return frames
	}
	return []Effect{{Kind: EffectSSEBroadcast, Frame: httpapi.ResyncFrame(len(frames))}}
}

// compactIfWorthIt rewrites the log to one line per live task once it holds more than twice
// that (and at least a few hundred lines): the rewrite is amortised over many appends, so the
// cost per change stays constant.
func (m *Machine) compactIfWorthIt() bool {
	live := len(m.tasks)
	if (m.historyLines < 256 || m.historyLines <= 2*live) && !m.size.outgrown() {
		return false
	}
	m.compact()
	return true
}

// compact rewrites the log as one line per live task, in launch order.
func (m *Machine) compact() {
	var b strings.Builder
	entries := make([]indexEntry, 0, len(m.tasks))
	for _, id := range m.order {
		if t := m.tasks[id]; t != nil {
			line := taskLine(t)
			markWritten(t)
			t.recordBytes = len(line)
			// The record is the line less its checksum, space and newline.
			entries = append(entries, snapshotEntry(t, b.Len()+17, len(line)-18))
			b.WriteString(line)
		}
	}
	content := b.String()
	m.progressHeld = nil // every task's line is in the rewrite, progress and all
	m.size = logSize{logBytes: len(content), liveBytes: len(content)}
	m.out = append(m.out, Effect{Kind: EffectHistoryRewrite, Content: content})
	m.historyLines = len(m.tasks)
	m.tornTail = false // the rewrite leaves no torn line behind
	if len(entries) >= indexMinLines {
		m.planIndex(&indexSnapshot{log: content, lines: len(entries), newlines: len(entries), entries: entries})
	} else {
		m.pendingIndex = nil
	}
}
