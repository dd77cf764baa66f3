package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/internal/ssetest"
)

// `asyncagents serve` answers the status API over a stored history with no OpenCode running,
// requires the token it prints, follows lines appended while it runs (its event stream sees
// them), and stops gracefully when its context ends.
func TestServeFollowsTheStoredHistory(t *testing.T) {
	wasm, home, project := cliSetup(t)
	t.Setenv("ASYNCAGENTS_API_AUTH", "")
	st := core.StoragePaths("", home, project)
	require.NoError(t, os.MkdirAll(filepath.Dir(st.History), 0o700))
	running := task.Task{ID: "ses_abc", ParentSessionID: "ses_p", ParentMessageID: "m", BatchID: "m", Description: "Survey auth",
		Prompt: "p", Agent: "general", Status: task.StatusRunning, StartedAt: 1_700_000_000_000, Progress: task.Progress{LastTools: []string{}}, Depth: 1}
	require.NoError(t, os.WriteFile(st.History, []byte(core.HistoryLine(running)), 0o600))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, core.CLIArgs{Command: "serve", Project: project, Wasm: wasm}, pw)
		pw.Close()
	}()
	out := bufio.NewReader(pr)
	first, err := out.ReadString('\n')
	require.NoError(t, err)
	require.Contains(t, first, "serving 1 task of "+project)
	url := strings.Fields(first[strings.Index(first, " at ")+4:])[0]
	tokenLine, err := out.ReadString('\n')
	require.NoError(t, err)
	token := strings.TrimSpace(strings.TrimPrefix(tokenLine, "token:"))
	require.Len(t, token, 64)
	go func() { _, _ = io.Copy(io.Discard, out) }() // the rest of its output

	client := &http.Client{Timeout: 5 * time.Second}
	get := func(path string, auth bool) (int, string) {
		req, _ := http.NewRequest("GET", url+path, nil)
		if auth {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := client.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	code, _ := get("/v1/health", false)
	require.Equal(t, 200, code)
	code, _ = get("/v1/tasks", false)
	require.Equal(t, 401, code, "the token is required")
	code, body := get("/v1/tasks", true)
	require.Equal(t, 200, code)
	require.Contains(t, body, `"sessionID":"ses_abc"`)
	require.Contains(t, body, `"status":"running"`)
	code, body = get("/v1/tasks/ses_abc/logs", true)
	require.Equal(t, 503, code, "logs need OpenCode")
	require.Contains(t, body, "not running")

	// An event stream, then the plugin (here: the test) appends the task's completion.
	sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
	defer scancel()
	req, _ := http.NewRequestWithContext(sctx, "GET", url+"/v1/events?token="+token, nil)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, 200, res.StatusCode)
	events := ssetest.NewReader(res.Body)
	frame, err := events.Next()
	require.NoError(t, err)
	require.Equal(t, "snapshot", frame.Event)

	done2 := running
	done2.Status, done2.Result, done2.CompletedAt = task.StatusCompleted, "found it", 1_700_000_005_000
	f, err := os.OpenFile(st.History, os.O_APPEND|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	_, err = f.WriteString(core.HistoryLine(done2))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	for frame.Event != "task.completed" {
		frame, err = events.Next()
		require.NoError(t, err, "the completion reaches the stream within the deadline")
	}
	require.Contains(t, frame.Data, `"result":"found it"`)
	code, body = get("/v1/tasks/ses_abc", true)
	require.Equal(t, 200, code)
	require.Contains(t, body, `"status":"completed"`)

	// A compaction replaces the file (write, then rename): serve reads it whole again.
	other := running
	other.ID, other.Description = "ses_new", "Map routes"
	tmp := st.History + ".tmp"
	require.NoError(t, os.WriteFile(tmp, []byte(core.HistoryLine(other)), 0o600))
	require.NoError(t, os.Rename(tmp, st.History))
	for frame.Event != "task.created" {
		frame, err = events.Next()
		require.NoError(t, err, "the replaced log reaches the stream within the deadline")
	}
	code, body = get("/v1/tasks", true)
	require.Equal(t, 200, code)
	require.Contains(t, body, `"sessionID":"ses_new"`)
	require.NotContains(t, body, `"sessionID":"ses_abc"`, "a task the compacted log dropped is gone")

	// Stopping ends the stream and returns cleanly.
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("serve did not stop within 5 s")
	}
}

func TestServeRejectsABadPort(t *testing.T) {
	var out, errb bytes.Buffer
	require.Equal(t, 2, run([]string{"serve", "--port", "http"}, &out, &errb))
	require.Contains(t, errb.String(), `asyncagents serve: --port: "http" is not a port number`)
	require.Empty(t, out.String())
}

// follow reads only what was appended since its last look: readFrom gives the file from an
// offset to its end, including what was written after the file was opened and sized.
func TestReadFromReadsTheFileFromAnOffset(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.log")
	require.NoError(t, os.WriteFile(path, []byte("line one\nline two\n"), 0o600))
	f, info, err := openHistory(path)
	require.NoError(t, err)
	defer f.Close()
	appended, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = appended.WriteString("line three\n")
	require.NoError(t, err)
	require.NoError(t, appended.Close())

	for from, want := range map[int64]string{0: "line one\nline two\nline three\n", 9: "line two\nline three\n", 18: "line three\n", 29: ""} {
		data, err := readFrom(f, from, info.Size())
		require.NoError(t, err)
		require.Equal(t, want, string(data), "from %d", from)
	}

	f, info, err = openHistory(filepath.Join(t.TempDir(), "missing.log"))
	require.NoError(t, err)
	require.Nil(t, f)
	require.Nil(t, info)
}
