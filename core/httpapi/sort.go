package httpapi

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/asyncagents/asyncagents/core/history"
	"github.com/asyncagents/asyncagents/core/task"
)

// /v1/tasks's order: newest first unless sort= names another column, over every matching task,
// not the page alone (a dashboard sorting 10,000 tasks by cost sees the costliest first).

// APISortKeys are the values sort= accepts: the dashboard's columns.
var APISortKeys = []string{"startedAt", "description", "agent", "status", "duration", "model", "tokens", "cost"}

// apiParseSort reads sort= and order= into f.
func apiParseSort(q []apiQueryParam, f *apiListFilter) string {
	if v := apiQueryGet(q, "sort"); v != "" {
		if !slices.Contains(APISortKeys, v) {
			return fmt.Sprintf("invalid sort %s: allowed values are %s (default startedAt)", apiEcho(v), strings.Join(APISortKeys, ", "))
		}
		f.sort = v
	}
	switch v := apiQueryGet(q, "order"); v {
	case "", "desc":
	case "asc":
		f.asc = true
	default:
		return fmt.Sprintf("invalid order %s: allowed values are asc, desc (default desc)", apiEcho(v))
	}
	return ""
}

// newestFirst reports whether f asks for the API's own order, which apiPage reads in one pass.
func (f *apiListFilter) newestFirst() bool {
	return (f.sort == "" || f.sort == "startedAt") && !f.asc
}

// apiSortedBy returns the indexes of the tasks f matches in f's order. Ties keep the newest
// first, so a page never changes between two reads of the same tasks.
func apiSortedBy(tasks []*task.Task, f *apiListFilter, now int64) []int {
	idx := apiNewestFirst(tasks, f.match)
	if f.sort == "" || f.sort == "startedAt" {
		slices.Reverse(idx) // ascending; ties then oldest launch first, as reversed order should
		return idx
	}
	type keyed struct {
		i   int
		num float64
		str string
	}
	keys := make([]keyed, len(idx))
	for k, i := range idx {
		t := tasks[i]
		e := keyed{i: i}
		switch f.sort {
		case "description":
			e.str = strings.ToLower(t.Description)
		case "agent":
			e.str = strings.ToLower(t.Agent)
		case "status":
			e.str = apiStatusLabel(t)
		case "duration":
			e.num = float64(history.Duration(t, now))
		case "model":
			history.Load(t)
			e.str = strings.ToLower(t.Model)
		case "tokens":
			history.Load(t)
			if t.Tokens != nil {
				e.num = float64(t.Tokens.Total())
			}
		case "cost":
			history.Load(t)
			e.num = t.Cost
		}
		keys[k] = e
	}
	slices.SortStableFunc(keys, func(a, b keyed) int {
		c := cmp.Compare(a.num, b.num)
		if c == 0 {
			c = strings.Compare(a.str, b.str)
		}
		if !f.asc {
			c = -c
		}
		return c
	})
	for k, e := range keys {
		idx[k] = e.i
	}
	return idx
}

// apiStatusLabel is the status a user reads: a task waiting for a slot is queued, not running.
func apiStatusLabel(t *task.Task) string {
	return string(t.Shown())
}

// apiQueued is the status filter's name for a task waiting for a slot; its status is running.
const apiQueued = "queued"
