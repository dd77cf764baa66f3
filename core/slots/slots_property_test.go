package slots

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

var limits = Limits{
	MaxStarts: 4,
	Concurrency: config.ConcurrencyConfig{
		Default:   2,
		Providers: map[string]int{"p": 2},
		Models:    map[string]int{"p/x": 1, "q/y": 0},
	},
}

var models = []string{"p/x", "p/z", "q/y", "r/w", "s/v"}

// queue plays the machine over the slots' decisions: tasks launch, end and fall back to another
// model in a random order, and after each change the queued tasks that may start do.
type queue struct {
	t     *testing.T
	rng   *rand.Rand
	tasks []*task.Task
	seq   int
}

// start carries out Starts, and checks it keeps each limit's queue in launch order.
func (q *queue) start() {
	started := map[*task.Task]bool{}
	for _, i := range limits.Starts(q.tasks) {
		started[q.tasks[i]] = true
	}
	for i, t := range q.tasks {
		if !started[t] {
			continue
		}
		key := limits.Concurrency.LimitFor(t.Model).Key
		for _, older := range q.tasks[:i] {
			if older.Queued && !started[older] {
				require.NotEqual(q.t, key, limits.Concurrency.LimitFor(older.Model).Key, "%s starts before an older task of its limit", t.ID)
			}
		}
	}
	for t := range started {
		t.Queued = false
	}
}

// admit puts t in the queue unless it may start now, as the machine does on a launch or a
// fallback, and checks it never starts ahead of an older task waiting for its limit.
func (q *queue) admit(t *task.Task) {
	t.Queued = true
	if !limits.MayStart(q.tasks, t) {
		return
	}
	t.Queued = false
	key := limits.Concurrency.LimitFor(t.Model).Key
	for _, older := range q.tasks[:slices.Index(q.tasks, t)] {
		require.False(q.t, older.Queued && limits.Concurrency.LimitFor(older.Model).Key == key, "%s starts before an older task of its limit", t.ID)
	}
}

func (q *queue) act() {
	switch r := q.rng.Intn(10); {
	case r < 5:
		q.seq++
		t := &task.Task{ID: string(rune('a'+q.seq%26)) + string(rune('0'+q.seq/26%10)), Model: models[q.rng.Intn(len(models))]}
		q.tasks = append(q.tasks, t)
		q.admit(t)
	case r < 8 && len(q.tasks) > 0:
		i := q.rng.Intn(len(q.tasks))
		q.tasks = slices.Delete(q.tasks, i, i+1) // ended or cancelled, running or queued
		if q.rng.Intn(3) == 0 {
			return // a stop of several tasks holds the starts until it is done (a slot is free meanwhile)
		}
	case len(q.tasks) > 0:
		t := q.tasks[q.rng.Intn(len(q.tasks))]
		if !t.Queued { // a fallback leaves its model's slot for one on the next model
			t.Model = models[q.rng.Intn(len(models))]
			q.admit(t)
		}
	}
	q.start()
	q.check()
}

// check: no limit runs more than its value, no task waits while its slot is free (a leak), and
// every queued task has its place, counted from 1 within its limit.
func (q *queue) check() {
	u := limits.InUse(q.tasks)
	running, byKey := 0, map[string]int{} // counted here, not by the package under test
	for _, t := range q.tasks {
		if !t.Queued {
			running++
			byKey[limits.Concurrency.LimitFor(t.Model).Key]++
		}
	}
	require.Equal(q.t, running, u.Total)
	require.Equal(q.t, byKey, u.ByKey)
	require.LessOrEqual(q.t, running, limits.MaxStarts)
	places := map[string]int{}
	waits := limits.Waits(q.tasks)
	for i, t := range q.tasks {
		l := limits.Concurrency.LimitFor(t.Model)
		if l.Max > 0 {
			require.LessOrEqual(q.t, byKey[l.Key], l.Max, "limit %s", l.Option)
		}
		if !t.Queued {
			require.Nil(q.t, waits[i], "a running task waits for nothing")
			continue
		}
		require.NotNil(q.t, limits.BlockedBy(t.Model, u), "task %s on %s waits while its slot is free", t.ID, t.Model)
		places[l.Key]++
		require.NotNil(q.t, waits[i], "a queued task says what it waits for")
		require.Equal(q.t, places[l.Key], waits[i].Position)
	}
}

// Over random launches, ends and fallbacks, computed without a machine: the limits hold, no slot
// leaks, each limit's queue is first in first out, and once every running task ends the queue
// drains.
func TestSlotsHoldOverRandomQueues(t *testing.T) {
	queued := 0
	for seed := int64(1); seed <= 100; seed++ {
		q := &queue{t: t, rng: rand.New(rand.NewSource(seed))}
		for range 120 {
			q.act()
			for _, t := range q.tasks {
				if t.Queued {
					queued++
				}
			}
		}
		for range 1000 { // drain: the oldest running task ends, until none is left
			i := slices.IndexFunc(q.tasks, func(t *task.Task) bool { return !t.Queued })
			if i < 0 {
				break
			}
			q.tasks = slices.Delete(q.tasks, i, i+1)
			q.start()
			q.check()
		}
		require.Empty(t, q.tasks, "seed %d: every queued task started and ended", seed)
	}
	require.Positive(t, queued, "some task waited for a slot")
}

// A task blocked by the overall cap waits for it even where its own limit is free, and a
// limit of 0 means no limit of its own.
func TestBlockedByNamesTheLimit(t *testing.T) {
	u := Use{Total: 4, ByKey: map[string]int{}}
	require.Equal(t, &task.Wait{Limit: "maxConcurrentStarts", Max: 4}, limits.BlockedBy("r/w", u))
	u = Use{Total: 2, ByKey: map[string]int{"model:p/x": 1, "model:q/y": 3}}
	require.Equal(t, &task.Wait{Limit: `concurrency.models["p/x"]`, Max: 1}, limits.BlockedBy("p/x", u))
	require.Nil(t, limits.BlockedBy("q/y", u))
}
