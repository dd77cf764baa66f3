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

// Limits are the caps the queue enforces. A task on a worker (task.Task.Worker) takes a slot of
// that worker (Workers, its maxTasks) instead of a local one (MaxStarts); the model and provider
// limits count the tasks of every place together.
type Limits struct {
	MaxStarts   int
	Concurrency config.ConcurrencyConfig
	Workers     map[string]int
}

// Of reads the caps from the config.
func Of(cfg config.Config) Limits {
	l := Limits{MaxStarts: cfg.MaxConcurrentStarts, Concurrency: cfg.Concurrency}
	for name, w := range cfg.Workers {
		if l.Workers == nil {
			l.Workers = map[string]int{}
		}
		l.Workers[name] = w.MaxTasks
	}
	return l
}

// Use counts the running tasks (those holding a slot): local ones (Total), per worker and per
// model limit.
type Use struct {
	Total    int
	ByKey    map[string]int
	ByWorker map[string]int
}

// InUse counts the slots the tasks hold.
func (l Limits) InUse(tasks []*task.Task) Use {
	u := Use{ByKey: map[string]int{}, ByWorker: map[string]int{}}
	for _, t := range tasks {
		if !t.Queued {
			u.take(l, t.Model, t.Worker)
		}
	}
	return u
}

func (u *Use) take(l Limits, model, worker string) {
	if worker == "" {
		u.Total++
	} else {
		u.ByWorker[worker]++
	}
	u.ByKey[l.Concurrency.LimitFor(model).Key]++
}

// WorkerLimit names a worker's cap in a task.Wait.
func WorkerLimit(worker string) string { return "workers." + worker + ".maxTasks" }

// BlockedBy names the limit that keeps a local task on model from starting, given the slots in
// use; nil when it may start.
func (l Limits) BlockedBy(model string, u Use) *task.Wait { return l.BlockedAt(model, "", u) }

// BlockedAt is BlockedBy for a task placed on worker ("" for local).
func (l Limits) BlockedAt(model, worker string, u Use) *task.Wait {
	if worker == "" && u.Total >= l.MaxStarts {
		return &task.Wait{Limit: overallLimit, Max: l.MaxStarts}
	}
	if max := l.Workers[worker]; worker != "" && u.ByWorker[worker] >= max {
		return &task.Wait{Limit: WorkerLimit(worker), Max: max}
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
	return l.BlockedAt(t.Model, t.Worker, l.InUse(tasks)) == nil && !l.queuedAhead(tasks, t)
}

// queuedAhead reports whether an older queued task waits for the limit t would take: the same
// model limit, at the same place or (a limit of its own) anywhere.
func (l Limits) queuedAhead(tasks []*task.Task, t *task.Task) bool {
	c := l.Concurrency.LimitFor(t.Model)
	for _, q := range tasks {
		if q == t {
			return false
		}
		if q.Queued && l.Concurrency.LimitFor(q.Model).Key == c.Key && (q.Worker == t.Worker || c.Max > 0) {
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
	full := map[string]bool{} // places (worker, "" local) with no slot left
	for i, t := range tasks {
		if !t.Queued {
			continue
		}
		key := l.Concurrency.LimitFor(t.Model).Key
		if full[t.Worker] || blocked[key] {
			continue
		}
		if w := l.BlockedAt(t.Model, t.Worker, u); w != nil {
			if w.Limit == overallLimit || w.Limit == WorkerLimit(t.Worker) {
				full[t.Worker] = true
				continue
			}
			blocked[key] = true
			continue
		}
		u.take(l, t.Model, t.Worker)
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
		ahead[t.Worker+"\x00"+c.Key]++
		w := l.BlockedAt(t.Model, t.Worker, u)
		if w == nil {
			// Free under its own limit, behind older tasks of the same limit or the overall cap.
			w = &task.Wait{Limit: c.Option, Max: c.Max}
		}
		w.Position = ahead[t.Worker+"\x00"+c.Key]
		out[i] = w
	}
	return out
}
