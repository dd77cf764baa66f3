package core

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
)

// Both CLIs talk to the first live server: the plugin's before a read-only `asyncagents serve`,
// whichever started last, then the most recently started; a stale file is left out.
func TestLiveServerFilesPutThePluginsFirst(t *testing.T) {
	file := func(pid int, startedAt string, readOnly bool) config.ConfigFile {
		f := ServerFile{Port: 5000 + pid, PID: pid, StartedAt: startedAt, URL: "http://127.0.0.1:" + strconv.Itoa(5000+pid), ReadOnly: readOnly}
		return config.ConfigFile{Path: "/srv/" + strconv.Itoa(pid) + ".json", Text: f.Content()}
	}
	files := []config.ConfigFile{
		file(1, "2026-11-27T10:00:03.000Z", true), // serve, the newest
		file(2, "2026-11-27T10:00:01.000Z", false),
		file(3, "2026-11-27T10:00:02.000Z", false),
		file(4, "2026-11-27T10:00:04.000Z", false), // its process is gone
	}
	procs := []ProcInfo{{PID: 1, Running: true}, {PID: 2, Running: true}, {PID: 3, Running: true}, {PID: 4}}
	var pids []int
	for _, f := range LiveServerFiles(files, procs) {
		pids = append(pids, f.PID)
	}
	require.Equal(t, []int{3, 2, 1}, pids)
}
