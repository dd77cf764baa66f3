package main

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/host"
)

// serverFileFor writes a live server file of this process for project, pointing at srv.
func serverFileFor(t *testing.T, home, project string, srv *httptest.Server, token string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(project, 0o700))
	st := core.StoragePaths("", home, project)
	_, start := host.ProcStart(os.Getpid())
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	f := core.ServerFile{Port: port, PID: os.Getpid(), ProcStart: start, StartedAt: "2025-01-01T00:00:00.000Z", URL: srv.URL, Token: token, Auth: "token"}
	require.NoError(t, host.WriteServerFile(core.ServerFilePath(st.ServerDir, os.Getpid()), f.Content()))
}

// With no server running for the project, workers says so, naming the project, and prints nothing.
func TestWorkersWithNoServerSaysNoneRuns(t *testing.T) {
	wasm, _, project := cliSetup(t)
	require.NoError(t, os.MkdirAll(project, 0o700))
	var stdout, stderr bytes.Buffer
	require.Equal(t, 1, run([]string{"workers", "--project", project, "--wasm", wasm}, &stdout, &stderr))
	require.Empty(t, stdout.String())
	require.Contains(t, stderr.String(), "asyncagents workers: no running asyncagents server for "+project)
}

// A server that does not know the route (a plugin older than workers) gets its status and words
// shown, not an empty table.
func TestWorkersFromAServerWithoutTheRoute(t *testing.T) {
	wasm, home, project := cliSetup(t)
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	serverFileFor(t, home, project, srv, "tok")
	var stdout, stderr bytes.Buffer
	require.Equal(t, 1, run([]string{"workers", "--project", project, "--wasm", wasm}, &stdout, &stderr))
	require.Empty(t, stdout.String())
	require.Contains(t, stderr.String(), "did not list its workers: 404 404 page not found")
}
