// Package slots is the start queue's policy. A task runs only while a slot is free both under the
// overall cap (config.Config.MaxConcurrentStarts) and under the limit of the model it will use
// (config.ConcurrencyConfig: the exact model's entry, else its provider's, else the default).
// Each limit is a first-in-first-out queue of its own: a task waiting for a busy model never
// holds back one bound for a free model. Slots are not kept as counters but counted from the
// running tasks on every decision, so no path (a cancel, a restore, a fallback) can leak one.
//
// The package decides over the active tasks in launch order (a task holds a slot unless it is
// Queued) and returns decisions: whether a task may start, which queued tasks start now, what
// each queued task waits for. The machine carries them out.
package slots

import (
	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

// overallLimit names the overall cap in a task.Wait.
const overallLimit = "maxConcurrentStarts"

// Limits are the caps the queue enforces.
type Limits struct {
	MaxStarts   int
	Concurrency config.ConcurrencyConfig
}

// Of reads the caps from the config.
func Of(cfg config.Config) Limits {
	return Limits{MaxStarts: cfg.MaxConcurrentStarts, Concurrency: cfg.Concurrency}
}

// Use counts the running tasks (those holding a slot) overall and per limit.
type Use struct {
	Total int
	ByKey map[string]int
}

// InUse counts the slots the tasks hold.
func (l Limits) InUse(tasks []*task.Task) Use {
	u := Use{ByKey: map[string]int{}}
	for _, t := range tasks {
		if !t.Queued {
			u.take(l, t.Model)
		}
	}
	return u
}

func (u *Use) take(l Limits, model string) {
	u.Total++
	u.ByKey[l.Concurrency.LimitFor(model).Key]++
}

// BlockedBy names the limit that keeps a task on model from starting, given the slots in use;
// nil when it may start.
func (l Limits) BlockedBy(model string, u Use) *task.Wait {
	if u.Total >= l.MaxStarts {
		return &task.Wait{Limit: overallLimit, Max: l.MaxStarts}
	}
	c := l.Concurrency.LimitFor(model)
	if c.Max > 0 && u.ByKey[c.Key] >= c.Max {
		return &task.Wait{Limit: c.Option, Max: c.Max}
	}
	return nil
}

// MayStart decides whether t, Queued among tasks (so not counted), starts now: its slot is free
// and no older queued task waits for the same limit (those go first).
func (l Limits) MayStart(tasks []*task.Task, t *task.Task) bool {
	return l.BlockedBy(t.Model, l.InUse(tasks)) == nil && !l.queuedAhead(tasks, t)
}

// queuedAhead reports whether an older queued task waits for the limit t would take.
func (l Limits) queuedAhead(tasks []*task.Task, t *task.Task) bool {
	key := l.Concurrency.LimitFor(t.Model).Key
	for _, q := range tasks {
		if q == t {
			return false
		}
		if q.Queued && l.Concurrency.LimitFor(q.Model).Key == key {
			return true
		}
	}
	return false
}

// Starts lists the indexes of the queued tasks that start now, in the order to start them: oldest
// first within each limit, while slots are free. A limit whose oldest waiting task cannot start
// starts none of its younger ones, and a full overall cap starts nothing more.
func (l Limits) Starts(tasks []*task.Task) []int {
	u := l.InUse(tasks)
	var out []int
	blocked := map[string]bool{}
	for i, t := range tasks {
		if !t.Queued {
			continue
		}
		key := l.Concurrency.LimitFor(t.Model).Key
		if blocked[key] {
			continue
		}
		if w := l.BlockedBy(t.Model, u); w != nil {
			if w.Limit == overallLimit {
				break
			}
			blocked[key] = true
			continue
		}
		u.take(l, t.Model)
		out = append(out, i)
	}
	return out
}

// Waits gives each task what it waits for: nil for a running task, else the limit it waits for
// and its place in that limit's queue, for the tools, the status API and the dashboard.
func (l Limits) Waits(tasks []*task.Task) []*task.Wait {
	u := l.InUse(tasks)
	out := make([]*task.Wait, len(tasks))
	ahead := map[string]int{}
	for i, t := range tasks {
		if !t.Queued {
			continue
		}
		c := l.Concurrency.LimitFor(t.Model)
		ahead[c.Key]++
		w := l.BlockedBy(t.Model, u)
		if w == nil {
			// Free under its own limit, behind older tasks of the same limit or the overall cap.
			w = &task.Wait{Limit: c.Option, Max: c.Max}
		}
		w.Position = ahead[c.Key]
		out[i] = w
	}
	return out
}
