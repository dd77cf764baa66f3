package core

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/internal/tasktest"
	"github.com/asyncagents/asyncagents/core/internal/xxh64"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// An index sealed again after an edit, whose header claims as many entries as it has bytes, is
// turned away without allocating for them: a Task per claimed entry was over half a GB for 1 MB
// of index, and inside WebAssembly's 32-bit memory running out is fatal, not a panic.
func TestAnIndexCostsNoMoreThanItsSize(t *testing.T) {
	log := indexedHistory()
	const size = 1 << 20
	header := indexMagic + strconv.Itoa(len(log)) + " " + string(appendHex16(nil, xxh64.Sum([]byte(log)))) + " 0 0 0 0 " + strconv.Itoa(size) + "\n"
	body := header + strings.Repeat("x", size)
	sealed := body + string(appendHex16(nil, xxh64.Sum([]byte(body)))) + "\n"

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m := NewMachine(config.Config{})
	var res RestoreResult
	covered, _, _ := m.applyIndex(sealed, log, &res)
	runtime.ReadMemStats(&after)
	require.Zero(t, covered)
	t.Logf("sizeof(task.Task)=%d; %d bytes of index allocated %d MB", unsafe.Sizeof(task.Task{}), len(sealed), (after.TotalAlloc-before.TotalAlloc)>>20)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64*len(sealed)), "allocation bounded by the index's size")
}

// An index sealed again after an edit that lists no entries, and many lines, for a log it
// matches is not used: taken at its word, the restore found no task and compacted the log at
// once, rewriting it with nothing in it.
func TestAResealedIndexWithNoEntriesIsNotUsed(t *testing.T) {
	log := indexedHistory()
	body := indexMagic + strconv.Itoa(len(log)) + " " + string(appendHex16(nil, xxh64.Sum([]byte(log)))) + " 100000 0 0 0 0\n"
	sealed := body + string(appendHex16(nil, xxh64.Sum([]byte(body)))) + "\n"
	whole, indexed := NewMachine(config.Config{}), NewMachine(config.Config{})
	wantRes, _ := whole.Restore(tasktest.Now, log)
	gotRes, effects := indexed.RestoreIndexed(tasktest.Now, log, sealed)
	for _, e := range effects {
		require.NotEqual(t, EffectHistoryRewrite, e.Kind, "the log is not rewritten")
	}
	require.Zero(t, gotRes.Indexed)
	require.Equal(t, wantRes.Restored, gotRes.Restored, "a resealed index must not drop tasks")
}

// A log whose finished tasks started at a negative time (an edited log, an odd clock) gets an
// index that is used: such tasks are read from their records, not from heads the reader refuses.
func TestAnIndexOfNegativeStartTimesIsUsed(t *testing.T) {
	var b strings.Builder
	for i := range 300 {
		b.WriteString(HistoryLine(task.Task{ID: "ses_" + strconv.Itoa(i), ParentSessionID: "p", Status: task.StatusCompleted, StartedAt: int64(i) - 1}))
	}
	log := b.String()
	index := restoredIndex(t, log)
	require.NotEmpty(t, index)
	whole, indexed := NewMachine(config.Config{}), NewMachine(config.Config{})
	whole.Restore(tasktest.Now, log)
	res, _ := indexed.RestoreIndexed(tasktest.Now, log, index)
	require.Equal(t, 300, res.Indexed)
	require.Equal(t, whole.Tasks(), indexed.Tasks())
}
