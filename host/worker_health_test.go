package host

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
)

const testWorkerPassword = "hunter2-worker"

// fakeWorker is a worker's GET /global/health on 127.0.0.1 behind basic auth (alice's password
// is testWorkerPassword), as OpenCode answers it.
func fakeWorker(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok || user != "alice" || pass != testWorkerPassword {
			w.Header().Set("WWW-Authenticate", `Basic realm="opencode"`)
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		if r.Method != http.MethodGet || r.URL.Path != "/global/health" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Date", "Sat, 28 Nov 2026 02:32:35 GMT") // the worker's clock
		_, _ = w.Write([]byte(`{"healthy":true,"version":"1.18.33"}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestWorkerHealthAsksWithBasicAuthFromTheNamedVariable(t *testing.T) {
	srv := fakeWorker(t)
	t.Setenv("TEST_WORKER_PASSWORD", testWorkerPassword)
	got, err := WorkerHealth(context.Background(), &core.Remote{URL: srv.URL, Username: "alice", PasswordEnv: "TEST_WORKER_PASSWORD"})
	require.NoError(t, err)
	var h struct {
		Healthy bool   `json:"healthy"`
		Version string `json:"version"`
		Date    int64  `json:"date"`
	}
	require.NoError(t, json.Unmarshal(got, &h))
	require.True(t, h.Healthy)
	require.Equal(t, "1.18.33", h.Version)
	require.Equal(t, time.Date(2026, 11, 28, 2, 32, 35, 0, time.UTC).UnixMilli(), h.Date, "the Date header, for the core to read the worker's clock")
}

func TestWorkerHealthNamesEachFailureWithoutThePassword(t *testing.T) {
	srv := fakeWorker(t)
	// A port that was just free: nothing listens there.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	t.Setenv("TEST_WORKER_PASSWORD", testWorkerPassword)
	t.Setenv("TEST_WRONG_PASSWORD", "not-"+testWorkerPassword)
	for _, c := range []struct {
		name   string
		remote core.Remote
		want   string
	}{
		{"wrong password", core.Remote{URL: srv.URL, Username: "alice", PasswordEnv: "TEST_WRONG_PASSWORD"}, "wrong username or password (401)"},
		{"wrong user", core.Remote{URL: srv.URL, PasswordEnv: "TEST_WORKER_PASSWORD"}, "wrong username or password (401)"},
		{"unreachable", core.Remote{URL: dead, Username: "alice", PasswordEnv: "TEST_WORKER_PASSWORD"}, "connection refused"},
		{"variable unset", core.Remote{URL: srv.URL, Username: "alice", PasswordEnv: "TEST_UNSET_PASSWORD"}, "environment variable TEST_UNSET_PASSWORD is not set"},
		{"http off loopback", core.Remote{URL: "http://worker.example:4096", PasswordEnv: "TEST_WORKER_PASSWORD"}, "http:// is only allowed on loopback, not to worker.example, unless insecure is set"},
		{"not a URL", core.Remote{URL: "ftp://127.0.0.1", PasswordEnv: "TEST_WORKER_PASSWORD"}, `"ftp://127.0.0.1" is not an http:// or https:// URL`},
	} {
		_, err := WorkerHealth(context.Background(), &c.remote)
		require.EqualError(t, err, c.want, c.name)
		require.NotContains(t, err.Error(), testWorkerPassword, c.name)
	}
}
