package ocserve

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
)

// health is GET /global/health's status code with the given basic auth (none when password is "").
func health(t *testing.T, url, password string) int {
	ctx, cancel := context.WithTimeout(context.Background(), RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/global/health", nil)
	require.NoError(t, err)
	if password != "" {
		req.SetBasicAuth("opencode", password)
	}
	res, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(req)
	require.NoError(t, err)
	res.Body.Close()
	return res.StatusCode
}

// Two workers, each a plain OpenCode with its own password, home and clone of one project:
// /global/health answers 200 with the password and 401 without it or with the other's; a
// session on a worker runs on the mock model; SIGSTOP freezes a worker and SIGCONT thaws it.
func TestWorkersStartWithPasswords(t *testing.T) {
	ctx := testCtx(t, 150*time.Second)
	m := mockmodel.Start(t, mockmodel.Text("worker answer"))
	project := Prepare(t, Options{ModelURL: m.URL(), Plugins: []string{"file:///nonexistent/plugin.js"}, Files: map[string]string{"a.txt": "a\n"}})
	w1 := StartWorker(t, WorkerOptions{ModelURL: m.URL(), CloneOf: project.Dir})
	w2 := StartWorker(t, WorkerOptions{ModelURL: m.URL(), CloneOf: project.Dir})

	require.NotEqual(t, w1.Password(), w2.Password())
	require.NotEqual(t, w1.Home, w2.Home)
	for _, w := range []*Server{w1, w2} {
		require.Equal(t, 200, health(t, w.URL, w.Password()))
		require.Equal(t, 401, health(t, w.URL, ""))
		require.FileExists(t, filepath.Join(w.Dir, "a.txt"), "the worker's clone holds the project's files")
		cfg, err := os.ReadFile(filepath.Join(w.Dir, "opencode.json"))
		require.NoError(t, err)
		require.NotContains(t, string(cfg), "nonexistent", "a worker loads no plugin")
		require.NoDirExists(t, filepath.Join(w.Dir, ".opencode"))
	}
	require.Equal(t, 401, health(t, w1.URL, w2.Password()))

	id, err := w1.CreateSession(ctx, "")
	require.NoError(t, err)
	require.NoError(t, w1.PromptAsync(ctx, id, "", "hello"))
	require.NoError(t, w1.WaitIdle(ctx, id))
	msgs, err := w1.Messages(ctx, id)
	require.NoError(t, err)
	require.Equal(t, "worker answer", msgs[len(msgs)-1].Text())
	require.NotContains(t, w1.Logs(), w1.Password())

	w2.Pause()
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	err = w2.Do(short, http.MethodGet, "/global/health", nil, nil)
	cancel()
	require.Error(t, err, "a paused worker does not answer")
	require.True(t, strings.Contains(err.Error(), "deadline") || strings.Contains(err.Error(), "timeout"), err.Error())
	w2.Resume()
	require.NoError(t, w2.Do(ctx, http.MethodGet, "/global/health", nil, nil))
}
