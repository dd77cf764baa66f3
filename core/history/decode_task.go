package history

import (
	"reflect"
	"strconv"

	"github.com/asyncagents/asyncagents/core/task"
)

// A task record is read field by field by hand: through reflect (fastStruct), every field cost a
// Field lookup and a Set call, and inside WebAssembly that was most of a 10,000-task restore.
// The fields every record has are read here; the others (error, models, fallbackInfo...) still
// go through fastValue, and anything unexpected declines the whole record to encoding/json, so
// FuzzDecodeRecord holds this reader to encoding/json as it holds the rest.

var taskFields = fieldsOf(reflect.TypeOf(task.Task{}))

// The task.Task fields fastTaskFields reads itself, each a slot: it switches on a field's slot (a
// jump table) rather than on its name (string comparisons, each a call inside WebAssembly).
const (
	slotOther = iota // read by fastValue, through reflect
	slotID
	slotSessionID
	slotParentSessionID
	slotParentMessageID
	slotParentAgent
	slotBatchID
	slotDescription
	slotPrompt
	slotAgent
	slotStatus
	slotStartedAt
	slotCompletedAt
	slotResult
	slotProgress
	slotResumeCount
	slotIsForked
	slotRetrievedAt
	slotDepth
	slotModel
)

// taskSlots is the slot of each task.Task field, by field index.
var taskSlots = func() (slots [64]uint8) {
	for name, slot := range map[string]uint8{
		"id": slotID, "sessionID": slotSessionID, "parentSessionID": slotParentSessionID, "parentMessageID": slotParentMessageID,
		"parentAgent": slotParentAgent, "batchId": slotBatchID, "description": slotDescription,
		"prompt": slotPrompt, "agent": slotAgent, "status": slotStatus, "startedAt": slotStartedAt,
		"completedAt": slotCompletedAt, "result": slotResult, "progress": slotProgress,
		"resumeCount": slotResumeCount, "isForked": slotIsForked, "retrievedAt": slotRetrievedAt,
		"depth": slotDepth, "model": slotModel,
	} {
		slots[fieldIndex(name)] = slot
	}
	return slots
}()

// noStop: read the whole task object.
const noStop = -1

// fieldIndex is the index in task.Task of the field with JSON name name.
func fieldIndex(name string) int {
	i, ok := taskFields.byName[name]
	if !ok {
		panic("core: Task has no JSON field " + name)
	}
	return i
}

// fastTaskFields fills t from a task object with no whitespace and returns the rest of b and
// which fields it read (seen, a bit per field index). With headEnd a field index (not noStop), a
// task whose status, read by then, is terminal stops once that field's value is read (stopped),
// leaving the rest unread: the head a restore keeps (lazy.go). A task still at work is
// read whole in the same pass.
func fastTaskFields(b string, t *task.Task, headEnd int) (_ string, seen uint64, stopped bool, _ error) {
	if len(b) == 0 || b[0] != '{' {
		return "", 0, false, errSlowPath
	}
	b = b[1:]
	// seen has a bit per field, by its index in Task: encoding/json merges a repeated key, and
	// decides such records itself.
	next := 0
	for first := true; ; first = false {
		i, rest, end, ok := taskFields.member(b, first, &next, &seen)
		if !ok {
			return "", 0, false, errSlowPath
		}
		if end {
			return rest, seen, false, nil
		}
		b = rest
		var err error
		switch taskSlots[i] {
		case slotID:
			t.ID, b, err = fastString(b)
		case slotSessionID:
			t.SessionID, b, err = fastString(b)
		case slotParentSessionID:
			t.ParentSessionID, b, err = fastString(b)
		case slotParentMessageID:
			t.ParentMessageID, b, err = fastString(b)
		case slotParentAgent:
			t.ParentAgent, b, err = fastString(b)
		case slotBatchID:
			t.BatchID, b, err = fastString(b)
		case slotDescription:
			t.Description, b, err = fastString(b)
		case slotPrompt:
			t.Prompt, b, err = fastString(b)
		case slotAgent:
			t.Agent, b, err = fastString(b)
		case slotStatus:
			var s string
			s, b, err = fastString(b)
			t.Status = task.Status(s)
		case slotStartedAt:
			t.StartedAt, b, err = fastInt(b)
		case slotCompletedAt:
			t.CompletedAt, b, err = fastInt(b)
		case slotResult:
			t.Result, b, err = fastString(b)
		case slotProgress:
			b, err = fastProgress(b, &t.Progress)
		case slotResumeCount:
			var n int64
			n, b, err = fastInt(b)
			t.ResumeCount = int(n)
		case slotIsForked:
			t.IsForked, b, err = fastBool(b)
		case slotRetrievedAt:
			t.RetrievedAt, b, err = fastInt(b)
		case slotDepth:
			var n int64
			n, b, err = fastInt(b)
			t.Depth = int(n)
		case slotModel:
			t.Model, b, err = fastString(b)
		default:
			b, err = fastValue(b, reflect.ValueOf(t).Elem().Field(i))
		}
		if err != nil {
			return "", 0, false, errSlowPath
		}
		if i == headEnd && t.Status.Terminal() {
			return b, seen, true, nil
		}
	}
}

// fastProgress fills p from a progress object, as fastTaskFields does a task.
func fastProgress(b string, p *task.Progress) (string, error) {
	if len(b) == 0 || b[0] != '{' {
		return "", errSlowPath
	}
	b = b[1:]
	var seen uint8
	for first := true; ; first = false {
		key, rest, end, ok := nextKey(b, first)
		if !ok {
			return "", errSlowPath
		}
		if end {
			return rest, nil
		}
		b = rest
		var bit uint8
		var err error
		switch key {
		case "toolCalls":
			bit = 1
			var n int64
			n, b, err = fastInt(b)
			p.ToolCalls = int(n)
		case "lastTools":
			bit = 2
			p.LastTools, b, err = fastStrings(b)
		case "lastUpdate":
			bit = 4
			p.LastUpdate, b, err = fastInt(b)
		default:
			return "", errSlowPath
		}
		if err != nil || seen&bit != 0 {
			return "", errSlowPath
		}
		seen |= bit
	}
}

// fastInt reads a JSON integer that fits an int64. Fractions, exponents, leading zeros and null
// decline: encoding/json decides those.
func fastInt(b string) (int64, string, error) {
	n := 0
	if n < len(b) && b[n] == '-' {
		n++
	}
	digits := n
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		n++
	}
	if n == digits || (n < len(b) && (b[n] == '.' || b[n] == 'e' || b[n] == 'E')) || (n-digits > 1 && b[digits] == '0') {
		return 0, "", errSlowPath
	}
	x, err := strconv.ParseInt(b[:n], 10, 64)
	if err != nil {
		return 0, "", errSlowPath
	}
	return x, b[n:], nil
}

// fastFloat reads a JSON number as a float64, as encoding/json does (a task's cost). The number
// must follow JSON's grammar: anything else, or a value out of range, goes to encoding/json.
func fastFloat(b string) (float64, string, error) {
	n := 0
	if n < len(b) && b[n] == '-' {
		n++
	}
	digits := n
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		n++
	}
	if n == digits || (n-digits > 1 && b[digits] == '0') {
		return 0, "", errSlowPath
	}
	if n < len(b) && b[n] == '.' {
		n++
		frac := n
		for n < len(b) && b[n] >= '0' && b[n] <= '9' {
			n++
		}
		if n == frac {
			return 0, "", errSlowPath
		}
	}
	if n < len(b) && (b[n] == 'e' || b[n] == 'E') {
		n++
		if n < len(b) && (b[n] == '+' || b[n] == '-') {
			n++
		}
		exp := n
		for n < len(b) && b[n] >= '0' && b[n] <= '9' {
			n++
		}
		if n == exp {
			return 0, "", errSlowPath
		}
	}
	x, err := strconv.ParseFloat(b[:n], 64)
	if err != nil {
		return 0, "", errSlowPath
	}
	return x, b[n:], nil
}

// fastBool reads true or false.
func fastBool(b string) (bool, string, error) {
	switch {
	case len(b) >= 4 && b[:4] == "true":
		return true, b[4:], nil
	case len(b) >= 5 && b[:5] == "false":
		return false, b[5:], nil
	}
	return false, "", errSlowPath
}

// fastStrings reads an array of strings; an empty array is an empty slice, as encoding/json
// gives. null declines.
func fastStrings(b string) ([]string, string, error) {
	if len(b) == 0 || b[0] != '[' {
		return nil, "", errSlowPath
	}
	b = b[1:]
	var out []string
	for len(b) > 0 && b[0] != ']' {
		if len(out) > 0 {
			if b[0] != ',' {
				return nil, "", errSlowPath
			}
			b = b[1:]
		}
		s, rest, err := fastString(b)
		if err != nil {
			return nil, "", errSlowPath
		}
		out = append(out, s)
		b = rest
	}
	if len(b) == 0 {
		return nil, "", errSlowPath
	}
	if out == nil {
		out = []string{}
	}
	return out, b[1:], nil
}
