package core

import (
	"errors"
	"strings"
	"unsafe"

	"github.com/asyncagents/asyncagents/core/history"
	"github.com/asyncagents/asyncagents/core/internal/xxh64"
	"github.com/asyncagents/asyncagents/core/task"
)

// A history of changes, not copies: a task's prompt and result are written once each. A line
// after the first that this log holds of the task leaves out a large field unchanged since the
// task's previous line, and says so ({"keep":"prompt,result","task":{...}}, the field written
// empty or left out): a restore takes that field from the task as the lines before made it. A
// 1 MB prompt is then written once, not with every progress line, and a result once, not again
// when it is read or its notice accepted; the child's work so far (partial) is not repeated by
// the lines that only count its usage.
//
// What the writer compares is a hash of each field as last written (run.written), reset whenever
// the log may not hold that line: after a restore (the first line of each task is whole again)
// and after a compaction, which writes every task whole. While the history cannot be written
// nothing is appended, and the retry's compaction sets them anew (storage_fault.go).

// keepMinBytes is the size from which a field is left out when unchanged: below it the line
// costs little more than the marker.
const keepMinBytes = 256

// keptHashes is what the log holds of a task's large fields: their hashes as last written.
type keptHashes struct {
	prompt, result, partial uint64
	ok                      bool // the log holds a line of the task (since the last restore or compaction)
}

func hashOf(s string) uint64 { return xxh64.Sum(unsafe.Slice(unsafe.StringData(s), len(s))) }

// partialOf is a hash of p (the child's work so far, which its progress lines repeat while only
// its usage changes) and about how many bytes it takes in a line.
func partialOf(p *task.Partial) (hash uint64, size int) {
	if p == nil {
		return 0, 0
	}
	var b strings.Builder
	b.WriteString(p.Text)
	for _, r := range p.Tools {
		b.WriteString("\x00" + r.Name + "\x00" + r.Title)
	}
	return hashOf(b.String()) ^ uint64(p.TextChars), b.Len() + 24*len(p.Tools)
}

func hashesOf(t *task.Task) keptHashes {
	partial, _ := partialOf(t.Partial)
	return keptHashes{prompt: hashOf(t.Prompt), result: hashOf(t.Result), partial: partial, ok: true}
}

// keepFields blanks in pub (t's public copy, about to be written) the large fields the log holds
// unchanged, returns their names for the line's "keep", and records what the line holds.
func keepFields(t *run, pub *task.Task) (keep string, keptBytes int) {
	was := t.written
	t.written = hashesOf(pub)
	if !was.ok {
		return "", 0
	}
	var kept []string
	if len(pub.Prompt) >= keepMinBytes && was.prompt == t.written.prompt {
		keptBytes += len(pub.Prompt)
		pub.Prompt, kept = "", append(kept, "prompt")
	}
	if len(pub.Result) >= keepMinBytes && was.result == t.written.result {
		keptBytes += len(pub.Result)
		pub.Result, kept = "", append(kept, "result")
	}
	if _, size := partialOf(pub.Partial); size >= keepMinBytes && was.partial == t.written.partial {
		keptBytes += size
		pub.Partial, kept = nil, append(kept, "partial")
	}
	return strings.Join(kept, ","), keptBytes
}

// markWritten records that the log holds t whole, as it is now (a compaction wrote it).
func markWritten(t *run) {
	t.written = hashesOf(&t.Task)
}

// taskRecordLine is the history line of pub, keeping the fields keep names.
func taskRecordLine(pub *task.Task, keep string) string {
	rec, _ := task.AppendJSON(nil, pub) // as json.Marshal writes it (core/task/encode.go)
	if keep == "" {
		return history.Checksummed([]byte(`{"task":` + string(rec) + `}`))
	}
	return history.Checksummed([]byte(`{"keep":"` + keep + `","task":` + string(rec) + `}`))
}

var errKeepWithoutBase = errors.New("keeps fields of a task no earlier line holds")

// applyKept fills in rec (a record read from a line with keep) the fields it kept, from was, the
// task as the earlier lines made it.
func applyKept(rec *task.Task, keep string, was *run) error {
	if was == nil {
		return errKeepWithoutBase
	}
	history.Load(&was.Task) // a finished task read as far as its head holds no result yet
	for _, f := range strings.Split(keep, ",") {
		switch f {
		case "prompt":
			rec.Prompt = was.Prompt
		case "result":
			rec.Result = was.Result
		case "partial":
			rec.Partial = was.Partial
		default:
			return errors.New("keeps an unknown field " + f)
		}
	}
	return nil
}
