package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/host"
	"github.com/asyncagents/asyncagents/internal/fixture"
)

// symlinkedProject makes the project directory and a symlink to it elsewhere in home.
func symlinkedProject(t *testing.T, home, project string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(project, 0o700))
	link := filepath.Join(home, "link")
	require.NoError(t, os.Symlink(project, link))
	return link
}

// `serve` started through a symlink writes its own server file under the project's real path;
// `dashboard --print`, asked by the real path or a path with "..", prints its page's URL with a
// one-time code of its own, never the token; when serve stops, its file goes and the dashboard finds no server.
func TestDashboardFindsServeThroughASymlink(t *testing.T) {
	wasm, home, project := cliSetup(t)
	t.Setenv("ASYNCAGENTS_API_AUTH", "")
	link := symlinkedProject(t, home, project)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- serve(ctx, core.CLIArgs{Command: "serve", Project: link, Wasm: wasm}, pw); pw.Close() }()
	out := bufio.NewReader(pr)
	first, err := out.ReadString('\n')
	require.NoError(t, err)
	require.Contains(t, first, "of "+project+" at ", "the symlink resolves to the project")
	url := strings.Fields(first[strings.Index(first, " at ")+4:])[0]
	tokenLine, err := out.ReadString('\n')
	require.NoError(t, err)
	token := strings.TrimSpace(strings.TrimPrefix(tokenLine, "token:"))
	go func() { _, _ = io.Copy(io.Discard, out) }()

	st := core.StoragePaths("", home, project)
	own := core.ServerFilePath(st.ServerDir, os.Getpid())
	info, err := os.Stat(own)
	require.NoError(t, err, "serve writes its own file, named by its pid")
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	var links []string
	for _, asked := range []string{project, filepath.Join(project, "..", "project"), link} {
		var stdout, stderr bytes.Buffer
		require.Equal(t, 0, run([]string{"dashboard", "--project", asked, "--print", "--wasm", wasm}, &stdout, &stderr), stderr.String())
		require.Regexp(t, "^"+regexp.QuoteMeta(url)+`/\?code=[0-9a-f]{32}\n$`, stdout.String(), "asked as %s", asked)
		require.NotContains(t, stdout.String(), token)
		links = append(links, strings.TrimSpace(stdout.String()))
	}
	// Each link's code is its own, and good once: the page's trade, from its own Origin.
	trade := func(link string) int {
		code := link[strings.Index(link, "code=")+5:]
		req, err := http.NewRequest(http.MethodPost, url+"/v1/dashboard/session?code="+code, nil)
		require.NoError(t, err)
		req.Header.Set("Origin", url)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		return res.StatusCode
	}
	require.Equal(t, 200, trade(links[1]))
	require.Equal(t, 401, trade(links[1]), "a link opens the dashboard once")
	require.Equal(t, 200, trade(links[0]))

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("serve did not stop within 5 s")
	}
	_, err = os.Stat(own)
	require.True(t, os.IsNotExist(err), "serve removes its own file when it stops")
	var stdout, stderr bytes.Buffer
	require.Equal(t, 1, run([]string{"dashboard", "--project", link, "--print", "--wasm", wasm}, &stdout, &stderr))
	require.Contains(t, stderr.String(), "no running asyncagents server for "+project)
}

// A server that asks no token (ASYNCAGENTS_API_AUTH=none) gets a URL without one; a stale file
// (its pid is this process, its start time another's) is not taken for a server.
func TestDashboardURLWithoutTokenAndStaleFilesIgnored(t *testing.T) {
	wasm, home, project := cliSetup(t)
	require.NoError(t, os.MkdirAll(project, 0o700))
	st := core.StoragePaths("", home, project)
	_, start := host.ProcStart(os.Getpid())
	path := core.ServerFilePath(st.ServerDir, os.Getpid())
	f := core.ServerFile{Port: 5999, PID: os.Getpid(), ProcStart: start, StartedAt: "2025-01-01T00:00:00.000Z", URL: "http://127.0.0.1:5999", Token: "secret", Auth: "none"}
	require.NoError(t, host.WriteServerFile(path, f.Content()))
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"dashboard", "--project", project, "--print", "--wasm", wasm}, &stdout, &stderr), stderr.String())
	require.Equal(t, "http://127.0.0.1:5999/\n", stdout.String())

	if start != "" {
		f.ProcStart = start + "1" // the same pid, another process
		require.NoError(t, host.WriteServerFile(path, f.Content()))
		stdout.Reset()
		require.Equal(t, 1, run([]string{"dashboard", "--project", project, "--print", "--wasm", wasm}, &stdout, &stderr))
		require.Contains(t, stderr.String(), "no running asyncagents server")
	}
}

// ls through a symlink reads the history the plugin keeps under the project's real path.
func TestLsThroughASymlinkReadsTheSameHistory(t *testing.T) {
	wasm, home, project := cliSetup(t)
	link := symlinkedProject(t, home, project)
	st := core.StoragePaths("", home, project)
	require.NoError(t, os.MkdirAll(filepath.Dir(st.History), 0o700))
	task := task.Task{ID: "ses_abc", ParentSessionID: "ses_p", Description: "Survey auth", Prompt: "p", Agent: "general",
		Status: task.StatusCompleted, StartedAt: fixture.Base, CompletedAt: fixture.Base + 1_000, Progress: task.Progress{LastTools: []string{}}, Depth: 1}
	require.NoError(t, os.WriteFile(st.History, []byte(core.HistoryLine(task)), 0o600))
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"ls", "--project", link, "--wasm", wasm}, &stdout, &stderr), stderr.String())
	require.Contains(t, stdout.String(), "Survey auth")
}

// ls reads every process's log of the project (core/history_files.go): the log of before, and
// two processes' own, one of them with a torn last line.
func TestLsReadsEveryProcessLog(t *testing.T) {
	wasm, home, project := cliSetup(t)
	st := core.StoragePaths("", home, project)
	require.NoError(t, os.MkdirAll(st.Dir, 0o700))
	line := func(id, desc string) string {
		return core.HistoryLine(task.Task{ID: id, ParentSessionID: "ses_p", Description: desc, Prompt: "p", Agent: "general",
			Status: task.StatusCompleted, StartedAt: fixture.Base, CompletedAt: fixture.Base + 1_000, Progress: task.Progress{LastTools: []string{}}, Depth: 1})
	}
	require.NoError(t, os.WriteFile(st.History, []byte(line("bg_0", "Of before")), 0o600))
	a := st.OwnHistory(11, "110").History
	require.NoError(t, os.WriteFile(a, []byte(line("bg_1", "Of process one")+"0123 torn"), 0o600))
	require.NoError(t, os.WriteFile(st.OwnHistory(12, "").History, []byte(line("bg_2", "Of process two")), 0o600))
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"ls", "--project", project, "--wasm", wasm}, &stdout, &stderr), stderr.String())
	for _, d := range []string{"Of before", "Of process one", "Of process two", "(1 corrupt history lines skipped)"} {
		require.Contains(t, stdout.String(), d)
	}
}
