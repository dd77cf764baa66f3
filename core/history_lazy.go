package core

import (
	"strings"

	"github.com/asyncagents/asyncagents/core/task"
)

// A restore reads each finished task's record only up to startedAt: the ID, parents, batch,
// description, prompt, agent, status and start time are what the restore, the indexes, the
// list's filters and its order need. The rest of the record (result, progress, error...) is kept
// as the line's text, inside the history the task's strings already point into, and read the
// first time anything needs it (load). Over 10,000 tasks that halves the decoding of a
// restart, which inside WebAssembly in Bun is most of its time.
//
// For every record the core writes, a head and its load give what reading it whole gives
// (FuzzLazyRecord, TestLazyRestoreAnswersAsAWholeRead). A line made by hand, with a valid
// checksum over JSON the core would not write, differs: with a head key repeated after
// startedAt it shows its head's values until loaded; with JSON that breaks after startedAt it is
// restored (head only, for good) where a whole read would have counted it corrupt. A torn or
// corrupt line never gets this far: its checksum fails.
//
// Who calls load: Machine.task (every lookup by ID), public (every copy that leaves the core or
// is persisted), Duration, and the status API wherever it shows or aggregates more than the
// head (apiOut, apiOutAll, groups, stats). Tasks still at work are always read whole: they are
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

// readRecordHead reads a record for a restore: a finished task's head only (keeping body for
// load), anything else whole. One pass: a task still at work is read on past its head.
func readRecordHead(body string) (historyRecord, error) { return readRecordHeadInto(body, nil) }

// readRecordHeadInto is readRecordHead reading a record of the usual form into into (a new Task if
// nil), which then holds garbage if the record's Task is not into.
func readRecordHeadInto(body string, into *task.Task) (historyRecord, error) {
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
			return historyRecord{Task: t}, nil
		case err == nil && !stopped && rest == "":
			return historyRecord{Task: t}, nil // read whole, as fastRecord reads it
		}
	}
	return decodeRecord(body)
}

// load reads the rest of a task a restore read only the head of; for any other task it does
// nothing. What the machine keeps beside the record (package core's run) is not touched.
func load(t *task.Task) {
	body := t.TakeRest()
	if body == "" {
		return
	}
	r, err := decodeRecord(body)
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

// sessionTask returns the task with id if a session launched it, read whole; nil otherwise.
// Loops over every task that pick one session's use it: the parent is in the head, so the
// other sessions' tasks (a whole history of them) are not read.
func (m *Machine) sessionTask(id, parentSessionID string) *run {
	t := m.tasks[id]
	if t == nil || t.ParentSessionID != parentSessionID {
		return nil
	}
	load(&t.Task)
	return t
}

// duration is t.Duration, read whole first: a head does not hold the task's end.
func duration(t *task.Task, now int64) int64 {
	load(t)
	return t.Duration(now)
}
