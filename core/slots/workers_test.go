package slots

import (
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// A worker's tasks take its slots and no local one; a full worker queues only its own tasks, in
// order, and the local queue and the other workers' go on; model limits count every place.
func TestWorkerSlots(t *testing.T) {
	l := Of(config.Config{MaxConcurrentStarts: 1, Workers: map[string]config.WorkerConfig{"w1": {MaxTasks: 2}, "w2": {MaxTasks: 1}},
		Concurrency: config.ConcurrencyConfig{Models: map[string]int{"p/x": 2}}})
	mk := func(worker, model string, queued bool) *task.Task {
		return &task.Task{Worker: worker, Model: model, Queued: queued}
	}
	tasks := []*task.Task{
		mk("", "a/b", false),   // local: the one local slot
		mk("w1", "a/b", false), // w1: 1 of 2
		mk("w1", "p/x", false), // w1: 2 of 2; p/x: 1 of 2
		mk("w1", "a/b", true),  // 3: waits for w1
		mk("", "a/b", true),    // 4: waits for the local slot
		mk("w2", "a/b", true),  // 5: w2 is free: starts
		mk("w2", "a/b", true),  // 6: behind 5 on w2
		mk("w2", "p/x", true),  // 7: w2 full after 5
	}
	require.Equal(t, []int{5}, l.Starts(tasks))
	u := l.InUse(tasks)
	require.Equal(t, 1, u.Total, "remote tasks take no local slot")
	require.Equal(t, &task.Wait{Limit: "workers.w1.maxTasks", Max: 2}, l.BlockedAt("a/b", "w1", u))
	require.Nil(t, l.BlockedAt("a/b", "w2", u))
	require.Equal(t, &task.Wait{Limit: "maxConcurrentStarts", Max: 1}, l.BlockedAt("a/b", "", u))
	waits := l.Waits(tasks)
	require.Equal(t, "workers.w1.maxTasks", waits[3].Limit)
	require.Equal(t, "maxConcurrentStarts", waits[4].Limit)
	require.Equal(t, 1, waits[5].Position)
	require.Equal(t, 2, waits[6].Position)
	// A model limit counts the tasks of every place: p/x has one on w1, so a second anywhere fits
	// and a third does not.
	u.ByKey[l.Concurrency.LimitFor("p/x").Key]++
	require.Equal(t, `concurrency.models["p/x"]`, l.BlockedAt("p/x", "w2", u).Limit)
	require.True(t, l.MayStart(tasks, tasks[5]))
	require.False(t, l.MayStart(tasks, tasks[6]), "behind an older task queued for w2")
}
