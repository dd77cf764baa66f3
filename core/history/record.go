package history

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
	"unsafe"

	"github.com/asyncagents/asyncagents/core/internal/xxh64"
	"github.com/asyncagents/asyncagents/core/task"
)

// Record is one line's JSON.
type Record struct {
	// Keep names the Task's large fields a line leaves out because the task's previous line in
	// the log holds them unchanged ("prompt", "result", "partial", comma-separated; core/history_keep.go).
	// It comes first in the line: {"keep":"prompt","task":{...}}.
	Keep    string     `json:"keep,omitempty"`
	Task    *task.Task `json:"task,omitempty"`
	Removed string     `json:"removed,omitempty"`
}

// Line renders one record.
func Line(r Record) string {
	b, _ := json.Marshal(r)
	return Checksummed(b)
}

// Checksummed prefixes a record's JSON with its XXH64 and ends the line.
func Checksummed(b []byte) string {
	return fmt.Sprintf("%016x %s\n", xxh64.Sum(b), b)
}

// SplitLines cuts a log into its lines, in place. One pass finds them all, so the map of tasks
// can be sized before the first record is applied (strings.Count is a byte loop inside
// WebAssembly, IndexByte a word loop, so a counting pass first would cost more than the split).
func SplitLines(log string) []string {
	out := make([]string, 0, len(log)/256+1)
	for rest := log; rest != ""; {
		i := strings.IndexByte(rest, '\n')
		if i < 0 {
			out = append(out, rest)
			break
		}
		out = append(out, rest[:i])
		rest = rest[i+1:]
	}
	return out
}

// ParseLine checks a line's checksum and decodes its record (with lazy, only the head of
// a finished task's, see lazy.go); legacy says the line carries a CRC-32, as lines did
// before XXH64.
func ParseLine(line string, lazy bool) (r Record, legacy bool, err error) {
	return ParseLineInto(line, lazy, nil)
}

// ParseLineInto is ParseLine reading a lazy record into into (see
// ReadHeadInto).
func ParseLineInto(line string, lazy bool, into *task.Task) (r Record, legacy bool, err error) {
	sum, body, ok := strings.Cut(line, " ")
	if !ok || (len(sum) != 16 && len(sum) != 8) {
		return r, false, fmt.Errorf("no checksum")
	}
	legacy = len(sum) == 8
	want, err := strconv.ParseUint(sum, 16, 64)
	if err != nil {
		return r, legacy, fmt.Errorf("bad checksum %q", sum)
	}
	// The line is read in place: a copy per line is garbage the collector pays for inside
	// WebAssembly. The checksum only reads it.
	bytes := unsafe.Slice(unsafe.StringData(body), len(body))
	if (legacy && uint64(crc32.ChecksumIEEE(bytes)) != want) || (!legacy && xxh64.Sum(bytes) != want) {
		return r, legacy, fmt.Errorf("checksum mismatch (torn or corrupt)")
	}
	if lazy {
		r, err = ReadHeadInto(body, into)
	} else {
		r, err = Decode(body)
	}
	if err != nil {
		return r, legacy, fmt.Errorf("bad JSON: %v", err)
	}
	if r.Removed == "" && (r.Task == nil || r.Task.ID == "") {
		return r, legacy, fmt.Errorf("no task in the record")
	}
	return r, legacy, nil
}

// fastKeepRecord reads {"keep":"…","task":{...}} as fastRecord reads a task's record.
func fastKeepRecord(b string) (Record, error) {
	keep, rest, err := fastString(b[len(`{"keep":`):])
	if err != nil || !strings.HasPrefix(rest, `,"task":{`) {
		return Record{}, errSlowPath
	}
	r, err := fastRecord(`{` + rest[1:])
	r.Keep = keep
	return r, err
}
