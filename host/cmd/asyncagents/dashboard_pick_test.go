package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/host"
)

// With `asyncagents serve` and the plugin both running for the project, `dashboard` takes the
// plugin's live server (which sees OpenCode and can cancel), whichever file it reads first, and
// says which server it took; with serve alone, it takes serve's and says it is read-only.
func TestDashboardPrefersThePluginsLiveServer(t *testing.T) {
	wasm, home, project := cliSetup(t)
	require.NoError(t, os.MkdirAll(project, 0o700))
	st := core.StoragePaths("", home, project)
	// Two live processes: this one stands for serve, a child for the OpenCode running the plugin.
	other := exec.Command("sleep", "60")
	require.NoError(t, other.Start())
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	write := func(pid, port int, readOnly bool) {
		_, start := host.ProcStart(pid)
		f := core.ServerFile{Port: port, PID: pid, ProcStart: start, StartedAt: "2025-01-01T00:00:00.000Z",
			URL: fmt.Sprintf("http://127.0.0.1:%d", port), Token: "secret", Auth: "none", ReadOnly: readOnly}
		require.NoError(t, host.WriteServerFile(core.ServerFilePath(st.ServerDir, pid), f.Content()))
	}
	write(os.Getpid(), 5998, true)

	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"dashboard", "--project", project, "--print", "--wasm", wasm}, &stdout, &stderr), stderr.String())
	require.Equal(t, "http://127.0.0.1:5998/\n", stdout.String())
	require.Contains(t, stderr.String(), "the read-only server of asyncagents serve")

	write(other.Process.Pid, 5999, false)
	stdout.Reset()
	stderr.Reset()
	require.Equal(t, 0, run([]string{"dashboard", "--project", project, "--print", "--wasm", wasm}, &stdout, &stderr), stderr.String())
	require.Equal(t, "http://127.0.0.1:5999/\n", stdout.String(), "the plugin's, not serve's")
	require.Contains(t, stderr.String(), fmt.Sprintf("the plugin's live server in OpenCode (pid %d)", other.Process.Pid))
}
