package host_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/host"
)

// A pid that runs nothing: the first one past ours that /proc (or a signal) says is free.
func deadPID(t *testing.T) int {
	for pid := os.Getpid() + 100_000; pid < os.Getpid()+101_000; pid++ {
		if running, _ := host.ProcStart(pid); !running {
			return pid
		}
	}
	t.Fatal("no free pid found")
	return 0
}

func TestWriteServerFileIsAtomicAndPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "servers-x", "1.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
	require.NoError(t, host.WriteServerFile(path, "new\n"))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "new\n", string(got))
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	left, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	require.Len(t, left, 1, "no temporary file is left")
}

// A reader finds the file whose pid runs with the start time it recorded; a file with the same
// pid and another start time (a reused pid), or with a pid that is gone, is stale and ignored.
func TestLiveServersSkipsStaleFiles(t *testing.T) {
	dir := t.TempDir()
	me := os.Getpid()
	_, start := host.ProcStart(me)
	write := func(f core.ServerFile) {
		require.NoError(t, host.WriteServerFile(core.ServerFilePath(dir, f.PID), f.Content()))
	}
	write(core.ServerFile{Port: 6001, PID: deadPID(t), StartedAt: "2025-01-02T00:00:00.000Z", Token: "gone"})
	if runtime.GOOS == "linux" {
		require.NotEmpty(t, start)
		write(core.ServerFile{Port: 6002, PID: me, ProcStart: start + "0", StartedAt: "2025-01-01T00:00:00.000Z", Token: "reused"})
		live, err := host.LiveServers(dir)
		require.NoError(t, err)
		require.Empty(t, live, "a reused pid is not the writer")
	}
	// The owner writes its own file over the stale one with its pid.
	write(core.ServerFile{Port: 6003, PID: me, ProcStart: start, StartedAt: "2025-01-01T00:00:00.000Z", Token: "mine"})
	live, err := host.LiveServers(dir)
	require.NoError(t, err)
	require.Len(t, live, 1)
	require.Equal(t, 6003, live[0].Port)

	none, err := host.LiveServers(filepath.Join(dir, "missing"))
	require.NoError(t, err)
	require.Empty(t, none)
}

// Only the owner removes its file: once another writer has replaced it, the first one's
// removal leaves it.
func TestRemoveServerFileOnlyByItsOwner(t *testing.T) {
	path := filepath.Join(t.TempDir(), "7.json")
	require.NoError(t, host.WriteServerFile(path, "first"))
	require.NoError(t, host.WriteServerFile(path, "second"))
	require.NoError(t, host.RemoveServerFile(path, "first"))
	_, err := os.Stat(path)
	require.NoError(t, err, "not the first writer's any more")
	require.NoError(t, host.RemoveServerFile(path, "second"))
	_, err = os.Stat(path)
	require.True(t, os.IsNotExist(err))
	require.NoError(t, host.RemoveServerFile(path, "second"), "already gone is no error")
}

func TestProcStartOfThisProcess(t *testing.T) {
	running, start := host.ProcStart(os.Getpid())
	require.True(t, running)
	if runtime.GOOS == "linux" {
		require.NotEmpty(t, start)
	}
	running, _ = host.ProcStart(deadPID(t))
	require.False(t, running)
}
