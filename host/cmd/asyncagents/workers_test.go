package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/host"
)

// serverFileFor writes a live server file of this process for project, pointing at srv.
func serverFileFor(t *testing.T, home, project string, srv *httptest.Server, token string) {
	t.Helper()
	writeServerFile(t, home, project, srv, token, false)
}

// writeServerFile writes it as the plugin does, or as `asyncagents serve` does (readOnly).
func writeServerFile(t *testing.T, home, project string, srv *httptest.Server, token string, readOnly bool) {
	t.Helper()
	require.NoError(t, os.MkdirAll(project, 0o700))
	st := core.StoragePaths("", home, project)
	_, start := host.ProcStart(os.Getpid())
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	f := core.ServerFile{Port: port, PID: os.Getpid(), ProcStart: start, StartedAt: "2025-01-01T00:00:00.000Z", URL: srv.URL, Token: token, Auth: "token", ReadOnly: readOnly}
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

// workersCore is a core as the plugin runs it with three workers: w1's stream up (and its health
// answered with OpenCode's version), w2's down with its reason, w3 not heard from yet.
func workersCore(t *testing.T, wasm string) *host.Core {
	t.Helper()
	ctx := context.Background()
	m, err := host.CompileFile(ctx, wasm)
	require.NoError(t, err)
	c, err := m.New(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close(ctx) })
	_, err = c.Init(ctx, config.Config{API: config.APIConfig{Token: "tok"}, Workers: map[string]config.WorkerConfig{
		"w1": {URL: "https://w1.example:4096", PasswordEnv: "W1_PASSWORD", Directory: "/srv/repo", MaxTasks: 2},
		"w2": {URL: "http://127.0.0.1:4097", PasswordEnv: "W2_PASSWORD", Directory: "/srv/repo"},
		"w3": {URL: "https://w3.example:4096", PasswordEnv: "W3_PASSWORD", Directory: "/srv/repo"},
	}})
	require.NoError(t, err)
	now := time.Now().UnixMilli()
	_, err = c.Step(ctx, now, core.Event{Type: core.EventStart})
	require.NoError(t, err)
	eff, err := c.Step(ctx, now, core.Event{Type: core.EventWorkerState, Worker: "w1", Up: true})
	require.NoError(t, err)
	for _, e := range eff {
		if e.Kind == core.EffectWorkerHealth && e.Worker == "w1" {
			_, err = c.Step(ctx, now, core.Event{Type: core.EventEffectDone, EffectID: e.ID, OK: true, Result: json.RawMessage(`{"healthy":true,"version":"1.18.33"}`)})
			require.NoError(t, err)
		}
	}
	_, err = c.Step(ctx, now, core.Event{Type: core.EventWorkerState, Worker: "w2", Error: "connection refused"})
	require.NoError(t, err)
	return c
}

// `asyncagents workers` against the Go host's status API over a fed core: each worker's health
// (up, down with its reason, unknown), load and version, in the core's table; --json the answer;
// a token the server does not take is an error naming the server and its answer.
func TestWorkersListsTheRunningPluginsWorkers(t *testing.T) {
	wasm, home, project := cliSetup(t)
	c := workersCore(t, wasm)
	srv := httptest.NewServer(&host.APIServer{Core: c, Now: func() int64 { return time.Now().UnixMilli() }})
	defer srv.Close()
	serverFileFor(t, home, project, srv, "tok")

	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"workers", "--project", project, "--wasm", wasm}, &stdout, &stderr), stderr.String())
	out := stdout.String()
	t.Logf("asyncagents workers:\n%s", out)
	require.Regexp(t, `(?m)^NAME +URL +RUNNING +QUEUED +VERSION +HEALTH$`, out)
	require.Regexp(t, `(?m)^w1 +https://w1\.example:4096 +0/2 +0 +1\.18\.33 +up for \S+$`, out)
	require.Regexp(t, `(?m)^w2 +http://127\.0\.0\.1:4097 +0/4 +0 +- +down for \S+: connection refused$`, out)
	require.Regexp(t, `(?m)^w3 +https://w3\.example:4096 +0/4 +0 +- +unknown`, out)
	require.NotContains(t, out, "PASSWORD", "not even the variable's name")

	stdout.Reset()
	require.Equal(t, 0, run([]string{"workers", "--project", project, "--wasm", wasm, "--json"}, &stdout, &stderr), stderr.String())
	var answer struct {
		Workers []struct{ Name, State, Version string } `json:"workers"`
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &answer))
	require.Len(t, answer.Workers, 3)
	require.Equal(t, "w1", answer.Workers[0].Name)
	require.Equal(t, "up", answer.Workers[0].State)

	serverFileFor(t, home, project, srv, "not-the-token")
	stdout.Reset()
	stderr.Reset()
	require.Equal(t, 1, run([]string{"workers", "--project", project, "--wasm", wasm}, &stdout, &stderr))
	require.Contains(t, stderr.String(), "did not list its workers: 401")
	require.Empty(t, stdout.String())
}

// From `asyncagents serve`'s read-only server (no plugin runs), the table comes with a line on
// stderr saying which server answered: it follows no worker, so their health is unknown there.
func TestWorkersFromTheReadOnlyServerSaysSo(t *testing.T) {
	wasm, home, project := cliSetup(t)
	srv := httptest.NewServer(&host.APIServer{Core: workersCore(t, wasm), Now: func() int64 { return time.Now().UnixMilli() }})
	defer srv.Close()
	writeServerFile(t, home, project, srv, "tok", true)
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"workers", "--project", project, "--wasm", wasm}, &stdout, &stderr), stderr.String())
	require.Contains(t, stderr.String(), "from the read-only server of asyncagents serve")
	require.Contains(t, stdout.String(), "NAME ")
}
