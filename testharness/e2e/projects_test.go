package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
)

// Two OpenCode processes on two projects, sharing one data directory: each project's server file
// (its own folder, its process's own file) names its own port, and stopping one leaves the
// other's file in place. (With one server.json for all, the second overwrote the first, and the
// first to stop removed the other's.)
func TestTwoProjectsEachKeepTheirServerFile(t *testing.T) {
	data := t.TempDir()
	idle := func(req mockmodel.Request) mockmodel.Reply { return mockmodel.Reply{Text: "ok"} }
	ports := []int{freeTCPPort(t), freeTCPPort(t)}
	envs := []*env{
		start(t, idle, "XDG_DATA_HOME="+data, fmt.Sprintf("ASYNCAGENTS_API_PORT=%d", ports[0])),
		start(t, idle, "XDG_DATA_HOME="+data, fmt.Sprintf("ASYNCAGENTS_API_PORT=%d", ports[1])),
	}
	storages := make([]core.Storage, 2)
	for i, e := range envs {
		// The plugin loads on the project's first request.
		_, err := e.oc.CreateSession(e.ctx(30*time.Second), "warm-up")
		require.NoError(t, err)
		dir, err := filepath.EvalSymlinks(e.oc.Dir)
		require.NoError(t, err)
		storages[i] = core.StoragePaths(data, e.oc.Home, dir)
	}
	require.NotEqual(t, storages[0].ServerDir, storages[1].ServerDir)
	portOf := func(st core.Storage) int {
		var sj serverJSON
		b, err := os.ReadFile(serverFileOf(st))
		if err != nil || json.Unmarshal(b, &sj) != nil {
			return 0
		}
		return sj.Port
	}
	for i, st := range storages {
		envs[i].eventually(fmt.Sprintf("project %d's server file", i), 30*time.Second, func() bool { return portOf(st) == ports[i] })
	}
	for i, st := range storages {
		require.Equal(t, ports[i], portOf(st), "each project's file names its own port")
		code, body := apiGet(t, fmt.Sprintf("http://127.0.0.1:%d/v1/health", ports[i]), "", "")
		require.Equal(t, 200, code, body)
	}

	require.NoError(t, envs[0].oc.Stop())
	envs[1].eventually("the stopped project's server file to go", 30*time.Second, func() bool {
		_, err := os.Stat(serverFileOf(storages[0]))
		return os.IsNotExist(err)
	})
	require.Equal(t, ports[1], portOf(storages[1]), "the other project's file stays")
	code, body := apiGet(t, fmt.Sprintf("http://127.0.0.1:%d/v1/health", ports[1]), "", "")
	require.Equal(t, 200, code, body)
}
