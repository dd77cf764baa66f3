package core

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
)

// A host's looks at another process's log, as FollowLook decides them: the first read is whole,
// then only what the log gained, a line still being written waits, a file renamed over the log
// (a compaction) or one shorter than what was read is read whole again, and a log gone drops its
// tasks. The host here is a file in memory.
func TestFollowLookReadsWhatTheLogGained(t *testing.T) {
	_, log := historyRun(t, 4)
	lines := strings.SplitAfter(log, "\n")
	m := NewMachine(config.Config{API: config.APIConfig{ReadOnly: true}})
	file, ino := "", uint64(1)
	look := func() (FollowRead, string) {
		t.Helper()
		read, _, _ := m.FollowLook(1e6, "history-k.9.log", &FileStat{Dev: 5, Ino: ino, Size: int64(len(file))})
		if !read.Read {
			return read, ""
		}
		got := file[read.From:]
		m.FollowBytes(1e6, "history-k.9.log", got, "", false)
		return read, got
	}
	tasks := func() int { return len(m.Tasks()) }

	file = strings.Join(lines[:3], "") + lines[3][:10] // three lines and the start of a fourth
	read, got := look()
	require.Equal(t, FollowRead{Read: true, Replace: true, First: true}, read)
	require.Equal(t, file, got)
	n := tasks()
	require.Positive(t, n)

	// The line being written is read again from its start, and waits while it is unfinished.
	read, got = look()
	require.Equal(t, FollowRead{Read: true, From: int64(len(strings.Join(lines[:3], "")))}, read)
	require.Equal(t, lines[3][:10], got)
	require.Equal(t, n, tasks())

	file = strings.Join(lines, "")
	read, got = look()
	require.Equal(t, int64(len(strings.Join(lines[:3], ""))), read.From)
	require.Equal(t, strings.Join(lines[3:], ""), got, "only what the log gained")
	require.False(t, read.Replace)

	// A compaction: another file, renamed over the log.
	ino = 2
	read, _ = look()
	require.Equal(t, FollowRead{Read: true, Replace: true}, read, "another file is read whole, not as a first read")

	// A log cut shorter than what was read is another log too.
	file = lines[0]
	read, _ = look()
	require.Equal(t, FollowRead{Read: true, Replace: true}, read)
	require.Equal(t, 1, tasks())

	// Gone: its tasks go, and a later look at nothing does nothing.
	read, _, _ = m.FollowLook(1e6, "history-k.9.log", nil)
	require.False(t, read.Read)
	require.Zero(t, tasks())
	read, _, effects := m.FollowLook(1e6, "history-k.9.log", nil)
	require.Equal(t, FollowRead{}, read)
	require.Empty(t, effects)
}

// A log first seen with nothing whole in it is looked at anew next time: its first read, with
// its index, is the one that finds lines.
func TestFollowLookAnEmptyLogIsReadAnew(t *testing.T) {
	m := NewMachine(config.Config{API: config.APIConfig{ReadOnly: true}})
	stat := &FileStat{Dev: 1, Ino: 1}
	read, _, _ := m.FollowLook(1, "history-k.9.log", stat)
	require.Equal(t, FollowRead{Read: true, Replace: true, First: true}, read)
	m.FollowBytes(1, "history-k.9.log", "", "", false)
	stat.Size = 3
	read, _, _ = m.FollowLook(1, "history-k.9.log", stat)
	require.Equal(t, FollowRead{Read: true, Replace: true, First: true}, read, "the first read is still to come")
	m.FollowBytes(1, "history-k.9.log", "par", "", false)
	read, _, _ = m.FollowLook(1, "history-k.9.log", stat)
	require.True(t, read.First)
}
