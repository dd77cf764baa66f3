package core

import (
	"strconv"
	"strings"
	"unsafe"

	"github.com/asyncagents/asyncagents/core/history"
	"github.com/asyncagents/asyncagents/core/internal/xxh64"
	"github.com/asyncagents/asyncagents/core/task"
)

// The history index: what a restore of the log found, written beside it so that the next
// restore does not read the log line by line. Reading 10,000 records (finding the lines,
// checking each line's checksum, reading each finished task's head) is most of a restart inside
// WebAssembly in Bun; with the index a restore checks one hash over the log and reads a short
// entry per task, and only the lines appended since the index was written are read as before.
//
// The index is a cache, never a record: it holds nothing the log does not. Whatever is wrong with
// it (missing, torn, from another version, or describing a log that has since been compacted,
// truncated or edited) makes the restore read the whole log, as it did without one. It names the
// log it describes by a prefix: the first logLen bytes of the log, with their XXH64. If the log
// starts with exactly those bytes, every line in them is one this core checked or wrote, and the
// index says what applying them gave; the rest of the log is read line by line.
//
// Format (text; the strings are raw, each prefixed by its length in bytes):
//
//	asyncagents-index 2 <logLen> <logXXH64> <lines> <newlines> <corrupt> <problems> <entries>\n
//	<len>:<problem>\n                                   (one per reported problem)
//	h <off> <len> <startedAt> <len>:<id><len>:<sessionID><len>:<parentSessionID><len>:<parentMessageID><len>:<parentAgent><len>:<batchId><len>:<description><len>:<agent><len>:<status>\n
//	w <off> <len>\n
//	<XXH64 of everything above, 16 hex digits>\n
//
// One entry per task, in launch order: h gives a finished task's head (what a restore reads of
// it, core/history/lazy.go, less the prompt, which nothing reads before history.Load), w says to read the
// record as a restore reads one. Both point at the record's JSON in the log (off, len). lines and
// newlines count the prefix's non-empty lines (for compaction) and its newlines (so problems
// found after it are numbered as in a whole read); corrupt and the problems are what the prefix
// held, reported again as a whole read would.
//
// When it is written: a restore that read more than indexMinLines lines of the log one by one,
// and every compaction, leave a snapshot of what they found (pendingIndex); the index is built
// from it on a timer (indexDelayMs), once the restore's answers are out, and handed to the host
// in a history.index effect, which replaces the file atomically. Another process compacting the
// log (Follow with replace) drops the snapshot: it no longer describes the file.

// EffectHistoryIndex asks the host to replace the history index (Content) atomically.
const EffectHistoryIndex = "history.index"

// HistoryIndexTimer is the timer after which a planned index is written.
const HistoryIndexTimer = "history.index"

const (
	// Version 2 added the session ID (task IDs are the core's own since then); a version 1
	// index is not read, and the next restore writes a version 2 one.
	indexMagic   = "asyncagents-index 2 "
	indexTimer   = HistoryIndexTimer
	indexDelayMs = 2000
	// indexMinLines: a restore that read fewer lines one by one writes no index; a history that
	// small restores in a few milliseconds without one.
	indexMinLines = 256
)

// indexEntry is one task of a snapshot: where its record is in the log and, for a head, the
// values the index holds.
type indexEntry struct {
	head          bool
	off, len      int
	startedAt     int64
	id, sessionID string
	parentSes     string
	parentMsg     string
	parentAgent   string
	batch, desc   string
	agent, status string
}

// indexSnapshot is what an index will say: the log it describes (its whole text; the index
// covers all of it) and the state applying it gave.
type indexSnapshot struct {
	log             string
	lines, newlines int
	corrupt         int
	problems        []string
	entries         []indexEntry
}

// snapshotEntry records t, whose record is at off (len bytes) in the log being snapshotted and
// says what t holds. A finished task's entry is its head: a restore would read no more of it. A
// start time the index's reader does not take (negative, or 19 digits: only an edited log or an
// odd clock gives one) makes it a w entry, read from its record, so the index is still used; so
// does a notice still owed (outbox.go), which the index's heads do not hold.
func snapshotEntry(t *run, off, n int) indexEntry {
	e := indexEntry{off: off, len: n}
	if t.Status.Terminal() && t.NoticeOwed == 0 && t.StartedAt >= 0 && t.StartedAt < 1e18 {
		e.head = true
		e.startedAt = t.StartedAt
		e.id, e.sessionID, e.parentSes, e.parentMsg, e.parentAgent = t.ID, t.SessionID, t.ParentSessionID, t.ParentMessageID, t.ParentAgent
		e.batch, e.desc, e.agent, e.status = t.BatchID, t.Description, t.Agent, string(t.Status)
	}
	return e
}

// planIndex keeps s to be written as the index once the timer fires.
func (m *Machine) planIndex(s *indexSnapshot) {
	m.pendingIndex = s
	m.out = append(m.out, Effect{Kind: EffectTimerSet, TimerID: indexTimer, DelayMs: indexDelayMs})
}

// writeIndex builds the pending index and asks the host to write it.
func (m *Machine) writeIndex() {
	s := m.pendingIndex
	m.pendingIndex = nil
	if s == nil {
		return
	}
	m.out = append(m.out, Effect{Kind: EffectHistoryIndex, Content: s.text()})
}

// text renders the snapshot as an index file.
func (s *indexSnapshot) text() string {
	b := make([]byte, 0, 64+len(s.entries)*160)
	b = append(b, indexMagic...)
	b = strconv.AppendInt(b, int64(len(s.log)), 10)
	b = append(b, ' ')
	b = appendHex16(b, xxh64.Sum(unsafe.Slice(unsafe.StringData(s.log), len(s.log))))
	for _, n := range []int{s.lines, s.newlines, s.corrupt, len(s.problems), len(s.entries)} {
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(n), 10)
	}
	b = append(b, '\n')
	for _, p := range s.problems {
		b = appendLenString(b, strings.ReplaceAll(p, "\n", " "))
		b = append(b, '\n')
	}
	for _, e := range s.entries {
		if e.head {
			b = append(b, "h "...)
		} else {
			b = append(b, "w "...)
		}
		b = strconv.AppendInt(b, int64(e.off), 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(e.len), 10)
		if e.head {
			b = append(b, ' ')
			b = strconv.AppendInt(b, e.startedAt, 10)
			b = append(b, ' ')
			for _, v := range []string{e.id, e.sessionID, e.parentSes, e.parentMsg, e.parentAgent, e.batch, e.desc, e.agent, e.status} {
				b = appendLenString(b, v)
			}
		}
		b = append(b, '\n')
	}
	sum := xxh64.Sum(b)
	b = appendHex16(b, sum)
	b = append(b, '\n')
	return string(b)
}

func appendLenString(b []byte, s string) []byte {
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, ':')
	return append(b, s...)
}

func appendHex16(b []byte, v uint64) []byte {
	const digits = "0123456789abcdef"
	for shift := 60; shift >= 0; shift -= 4 {
		b = append(b, digits[(v>>uint(shift))&15])
	}
	return b
}

// indexNum reads the decimal number at s[i:] (up to 18 digits), and where it ends; ok is false if
// there is none. Functions with no receiver and no state: the index is read by them 100,000
// times per 10,000 tasks, and the interpreter that runs a restore's code first pays for every
// call and every memory access.
func indexNum(s string, i int) (n int64, end int, ok bool) {
	start := i
	for i < len(s) && i-start < 18 {
		c := s[i]
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int64(c-'0')
		i++
	}
	return n, i, i > start
}

// indexStr reads a length-prefixed string ("<len>:<bytes>") at s[i:].
func indexStr(s string, i int) (v string, end int, ok bool) {
	n, i, ok := indexNum(s, i)
	if !ok || i >= len(s) || s[i] != ':' || int(n) > len(s)-i-1 {
		return "", i, false
	}
	i++
	return s[i : i+int(n)], i + int(n), true
}

// applyIndex restores the part of history the index describes, if it describes history's start,
// and returns how many bytes of history it covered (0: the index was not used, and nothing was
// changed). The machine must be empty.
func (m *Machine) applyIndex(index, hist string, res *RestoreResult) (covered int, lines, newlines int) {
	if len(index) < len(indexMagic)+17 || !strings.HasPrefix(index, indexMagic) {
		return 0, 0, 0
	}
	body, sum := index[:len(index)-17], index[len(index)-17:]
	if sum[16] != '\n' || string(appendHex16(nil, xxh64.Sum(unsafe.Slice(unsafe.StringData(body), len(body))))) != sum[:16] {
		return 0, 0, 0
	}
	// The header: the log's prefix, then five counts.
	var head [6]int64
	i, ok := len(indexMagic), true
	if head[0], i, ok = indexNum(body, i); !ok || i+17 > len(body) || body[i] != ' ' {
		return 0, 0, 0
	}
	logLen, logSum := int(head[0]), body[i+1:i+17]
	if logLen > len(hist) || string(appendHex16(nil, xxh64.Sum(unsafe.Slice(unsafe.StringData(hist), logLen)))) != logSum {
		return 0, 0, 0
	}
	i += 17
	for k := 1; k < len(head); k++ {
		if i >= len(body) || body[i] != ' ' {
			return 0, 0, 0
		}
		if head[k], i, ok = indexNum(body, i+1); !ok {
			return 0, 0, 0
		}
	}
	if i >= len(body) || body[i] != '\n' {
		return 0, 0, 0
	}
	i++
	lines, newlines = int(head[1]), int(head[2])
	corrupt, nProblems, nEntries := int(head[3]), int(head[4]), int(head[5])
	if !indexCountsHold(hist[:logLen], len(body), lines, newlines, corrupt, nProblems, nEntries) {
		return 0, 0, 0
	}
	var problems []string
	for range nProblems {
		var p string
		if p, i, ok = indexStr(body, i); !ok || i >= len(body) || body[i] != '\n' {
			return 0, 0, 0
		}
		problems = append(problems, p)
		i++
	}
	tasks := make(map[string]*run, nEntries+nEntries/8)
	order := make([]string, 0, nEntries)
	// One allocation for every head: inside WebAssembly each allocation is dozens of calls, so
	// thousands of small ones (or even blocks of 256) cost more than reading the entries. It is
	// sized by the entries the body has room for, not by the header's word.
	slab := make([]run, min(nEntries, len(body)/minHeadEntry))
	heads := 0
	view := make([]*run, 0, nEntries)
	for range nEntries {
		var into *run
		if heads < len(slab) {
			into = &slab[heads]
		}
		t, end := indexEntryAt(body, i, hist[:logLen], into)
		if t == nil {
			return 0, 0, 0
		}
		if t == into {
			heads++ // a head, read into the slab (a w entry's record has a task of its own)
		}
		i = end
		tasks[t.ID] = t
		order = append(order, t.ID)
		view = append(view, t)
	}
	if i != len(body) || len(tasks) != nEntries {
		// Past the entries, or a task twice (which the core never writes).
		return 0, 0, 0
	}
	// The view is the tasks in launch order, as freshView would find them.
	m.tasks, m.order, m.view, m.viewTasks = tasks, order, view, nil
	m.sessionsStale = true
	res.Corrupt, res.Problems, res.Indexed = corrupt, problems, len(tasks)
	return logLen, lines, newlines
}

// Bounds on an index's header, each one the writer never breaks. The index's seal is a checksum:
// it turns away a torn write, another version's index and a log changed since, not an edit
// sealed again, which can make a restore wrong as an edit of the log itself can. These bounds
// keep such an index from costing more than its size, or from dropping the log's tasks by
// itself: with no more lines than twice its entries, the index alone never makes a restore
// compact the log.
const (
	minIndexEntry = len("w 0 1\n")
	minHeadEntry  = len("h 0 1 0 0:0:0:0:0:0:0:0:\n")
	minLogLine    = len("0123456789abcdef x\n") // a record's line; a corrupt one can be 2 bytes
)

// indexCountsHold says whether an index's header counts can describe log (the prefix it covers)
// in a body of bodyLen bytes: the lines fit in the log, and are the entries' once or twice
// (every task has a line; a restore or compaction that left more than two lines a task would
// have compacted the log instead of writing an index), the corrupt lines are among them, the
// problems are the first few corrupt ones, and each entry takes its bytes of the body.
func indexCountsHold(log string, bodyLen, lines, newlines, corrupt, problems, entries int) bool {
	switch {
	case len(log) > 0 && log[len(log)-1] != '\n':
		return false // an index covers whole lines
	case newlines > len(log) || lines > newlines || (lines-corrupt)*minLogLine+2*corrupt > len(log):
		return false
	case entries < 1 || entries > lines || lines > 2*entries || entries > bodyLen/minIndexEntry:
		return false
	case corrupt < 0 || corrupt > lines || problems != min(corrupt, maxReportedProblems):
		return false
	}
	return true
}

// indexEntryAt reads the entry at body[i:] (with its newline) and returns its task (a head is
// read into into; with no into, a head is not an entry) and where the next entry starts; nil if
// the entry is not one.
func indexEntryAt(body string, i int, log string, into *run) (*run, int) {
	if i+2 > len(body) || body[i+1] != ' ' {
		return nil, i
	}
	kind := body[i]
	off, i, ok1 := indexNum(body, i+2)
	if !ok1 || i >= len(body) || body[i] != ' ' {
		return nil, i
	}
	n, i, ok2 := indexNum(body, i+1)
	if !ok2 || int(off) > len(log) || int(n) > len(log)-int(off) {
		return nil, i
	}
	record := log[off : off+n]
	var t *run
	switch kind {
	case 'h':
		if into == nil || i >= len(body) || body[i] != ' ' {
			return nil, i
		}
		started, j, ok := indexNum(body, i+1)
		if !ok || j >= len(body) || body[j] != ' ' {
			return nil, i
		}
		i = j + 1
		// The nine strings, read here rather than by indexStr: a call each is 90,000 calls.
		var f [9]string
		for k := range f {
			start, size := i, 0
			for i < len(body) && i-start < 9 && body[i] >= '0' && body[i] <= '9' {
				size = size*10 + int(body[i]-'0')
				i++
			}
			if i == start || i >= len(body) || body[i] != ':' || size > len(body)-i-1 {
				return nil, i
			}
			f[k] = body[i+1 : i+1+size]
			i += 1 + size
		}
		t = into
		t.ID, t.SessionID, t.ParentSessionID, t.ParentMessageID, t.ParentAgent, t.BatchID = f[0], f[1], f[2], f[3], f[4], f[5]
		t.Description, t.Agent, t.Status, t.StartedAt = f[6], f[7], task.Status(f[8]), started
		t.SetRest(record)
		if !t.Status.Terminal() {
			return nil, i // a head is a finished task's
		}
	case 'w':
		rec, err := history.ReadHead(record)
		if err != nil || rec.Task == nil {
			return nil, i
		}
		t = &run{Task: *rec.Task}
		if !t.Lazy() && t.Progress.LastTools == nil {
			t.Progress.LastTools = []string{}
		}
	default:
		return nil, i
	}
	if t.ID == "" || i >= len(body) || body[i] != '\n' {
		return nil, i
	}
	t.logAt, t.logLen = int(off), int(n)
	t.sseSent = t.Status // the event streams start from the status restored
	return t, i + 1
}
