package history

import (
	"strings"

	"github.com/asyncagents/asyncagents/core/task"
)

// A restore reads each finished task's record only up to startedAt: the ID, parents, batch,
// description, prompt, agent, status and start time are what the restore, the indexes, the
// list's filters and its order need. The rest of the record (result, progress, error...) is kept
// as the line's text, inside the history the task's strings already point into, and read the
// first time anything needs it (Load). Over 10,000 tasks that halves the decoding of a
// restart, which inside WebAssembly in Bun is most of its time.
//
// For every record the core writes, a head and its Load give what reading it whole gives
// (FuzzLazyRecord, TestLazyRestoreAnswersAsAWholeRead). A line made by hand, with a valid
// checksum over JSON the core would not write, differs: with a head key repeated after
// startedAt it shows its head's values until loaded; with JSON that breaks after startedAt it is
// restored (head only, for good) where a whole read would have counted it corrupt. A torn or
// corrupt line never gets this far: its checksum fails.
//
// Who calls Load: the machine's task lookup (every lookup by ID), its public copies (every copy
// that leaves the core or is persisted), Duration, and the status API wherever it shows or
// aggregates more than the head (apiOut, apiOutAll, groups, stats). Tasks still at work are always read whole: they are
// about to change, and a task is only changed after a lookup. The line's checksum has been
// checked at restore, so the rest reads as the core wrote it.

// lazyHeadEnd is the last key a restore reads of a finished task's record.
const lazyHeadEnd = "startedAt"

// lazyHeadEndField is lazyHeadEnd's field index in Task.
var lazyHeadEndField = fieldIndex(lazyHeadEnd)

// lazyHead is the fields a head must hold (a bit per field index in Task): those the restore,
// the indexes and the list read. A record written in another order is read whole.
var lazyHead = func() (mask uint64) {
	for _, name := range []string{"parentSessionID", "parentMessageID", "batchId", "description", "prompt", "agent", "status", lazyHeadEnd} {
		mask |= 1 << fieldIndex(name)
	}
	return mask
}()

// ReadHead reads a record for a restore: a finished task's head only (keeping body for
// Load), anything else whole. One pass: a task still at work is read on past its head.
func ReadHead(body string) (Record, error) { return ReadHeadInto(body, nil) }

// ReadHeadInto is ReadHead reading a record of the usual form into into (a new Task if
// nil), which then holds garbage if the record's Task is not into.
func ReadHeadInto(body string, into *task.Task) (Record, error) {
	if strings.HasPrefix(body, `{"task":{`) && strings.HasSuffix(body, "}}") {
		t := into
		if t == nil {
			t = &task.Task{}
		}
		rest, seen, stopped, err := fastTaskFields(body[len(`{"task":`):len(body)-1], t, lazyHeadEndField)
		t.AdoptLegacyID()
		switch {
		case err == nil && stopped && seen&lazyHead == lazyHead && t.ID != "":
			t.SetRest(body)
			return Record{Task: t}, nil
		case err == nil && !stopped && rest == "":
			return Record{Task: t}, nil // read whole, as fastRecord reads it
		}
	}
	return Decode(body)
}

// Load reads the rest of a task a restore read only the head of; for any other task it does
// nothing. What the machine keeps beside the record (package core's run) is not touched.
func Load(t *task.Task) {
	body := t.TakeRest()
	if body == "" {
		return
	}
	r, err := Decode(body)
	if err != nil || r.Task == nil || r.Task.ID != t.ID {
		// Only a line made by hand, with a checksum that holds over JSON the core would not
		// write, gets here: the head read at restore stays.
		return
	}
	if r.Task.Progress.LastTools == nil {
		r.Task.Progress.LastTools = []string{}
	}
	*t = *r.Task
}

// Duration is t.Duration, read whole first: a head does not hold the task's end.
func Duration(t *task.Task, now int64) int64 {
	Load(t)
	return t.Duration(now)
}
