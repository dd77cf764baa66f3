// The dashboard against `asyncagents serve` over a stored history.
package browser

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/internal/fixture"
)

// repoRoot is the checkout's root, where dist/ and node_modules/ are.
func repoRoot(t *testing.T) string {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	return root
}

// varied are the newest tasks of the fixture history: one of each ending, a Markdown result
// with HTML in it, and a fallback.
func varied() []task.Task {
	at := fixture.Base + 3_600_000 // newer than the fixture history, and within history.maxAgeDays
	base := task.Task{ParentSessionID: "ses_user", ParentMessageID: "msg_1", BatchID: "msg_1", Agent: "explore", Depth: 1,
		Progress: task.Progress{LastTools: []string{}}}
	survey := base
	survey.ID, survey.SessionID, survey.Description, survey.Prompt = "bg_00000000000000000000a1", "ses_survey", "Survey the auth module", "Look for the auth code and say where tokens are checked."
	survey.Status, survey.StartedAt, survey.CompletedAt, survey.Model = task.StatusCompleted, at, at+4200, "mock/b"
	survey.Result = "## Findings\n\nThe auth code lives in `session.go`.\n\n- **tokens** are checked in `middleware.go`\n- <img src=x onerror=alert(1)>\n\n" +
		"[run this](javascript:alert(1)) or read [the docs](https://example.com/docs).\n\n```go\nfunc check(t string) bool\n```\n"
	survey.Progress = task.Progress{ToolCalls: 5, LastTools: []string{"read", "grep"}, LastUpdate: at + 4000}
	survey.FallbackInfo = &task.FallbackInfo{Occurred: true, TotalAttempts: 2, SuccessfulModel: "mock/b", Attempts: []task.FallbackAttempt{
		{Model: "mock/a", Error: "rate limited", Class: "rate_limit", Timestamp: at},
		{Model: "mock/b", Success: true, Timestamp: at + 1000},
	}}
	broken := base
	broken.ID, broken.SessionID, broken.Description, broken.Prompt, broken.Agent = "bg_00000000000000000000a2", "ses_broken", "Break the build", "Run the build.", "general"
	broken.Status, broken.StartedAt, broken.CompletedAt = task.StatusError, at+1, at+900
	broken.Error = &task.TaskError{Name: "ProviderError", Message: "the model is overloaded"}
	docs := base
	docs.ID, docs.SessionID, docs.Description, docs.Prompt, docs.BatchID = "bg_00000000000000000000a3", "ses_docs", "Write the docs", "Write them.", "msg_2"
	docs.Status, docs.StartedAt, docs.CompletedAt, docs.CancelReason = task.StatusCancelled, at+2, at+300, "not needed"
	survey.Tokens, survey.Cost = &task.Tokens{Input: 12000, Output: 800}, 0.42
	// The costliest task of all is an old one, far past the first page: sorting by cost finds
	// it only if the server sorts every task, not the page shown.
	audit := base
	audit.ID, audit.SessionID, audit.Description, audit.Prompt = "bg_00000000000000000000a4", "ses_audit", "Old costly audit", "Audit everything."
	audit.Status, audit.StartedAt, audit.CompletedAt, audit.Result = task.StatusCompleted, fixture.Base-1, fixture.Base+60_000, "Audited."
	audit.Tokens, audit.Cost = &task.Tokens{Input: 900000, Output: 40000}, 9.5
	// A task waiting for a slot: no session yet.
	waiting := base
	waiting.ID, waiting.Description, waiting.Prompt, waiting.BatchID = "bg_00000000000000000000a5", "Wait for a slot", "Later.", "msg_3"
	waiting.Status, waiting.Queued, waiting.StartedAt = task.StatusRunning, true, at+3
	return []task.Task{audit, survey, broken, docs, waiting}
}

// The dashboard over `asyncagents serve` and a history of 1,205 tasks: see serve.mjs.
func TestDashboardOverServe(t *testing.T) {
	root := repoRoot(t)
	history := fixture.History(1200)
	for _, task := range varied() {
		history += core.HistoryLine(task)
	}
	s := startServe(t, root, history)
	Script(t, root, "serve.mjs", 3*time.Minute, nil, "DASH_URL="+s.URL, "DASH_TOKEN="+s.Token, "DASH_SHOTS="+filepath.Join(root, "dist", "screenshots"))
}

// A thousand tasks start and then finish while the page is open (burst.mjs): serve follows the
// history the way it follows a plugin's, and the page takes the thousand changes of each burst
// without freezing and without a reload.
func TestDashboardTakesABurst(t *testing.T) {
	root := repoRoot(t)
	s := startServe(t, root, fixture.History(50))
	const n = 1000
	at := fixture.Base + 7_200_000
	burst := func(done bool) {
		var b strings.Builder
		for i := 0; i < n; i++ {
			tk := task.Task{ID: fmt.Sprintf("bg_burst%014d", i), SessionID: fmt.Sprintf("ses_burst%d", i), ParentSessionID: "ses_user", ParentMessageID: "msg_b",
				BatchID: fmt.Sprintf("msg_burst%d", i/10), Description: fmt.Sprintf("burst job %d", i), Prompt: "Go.", Agent: "general", Depth: 1,
				Status: task.StatusRunning, StartedAt: at + int64(i), Progress: task.Progress{LastTools: []string{}}}
			if done {
				tk.Status, tk.CompletedAt, tk.Result = task.StatusCompleted, at+60_000+int64(i), "done"
			}
			b.WriteString(core.HistoryLine(tk))
		}
		f, err := os.OpenFile(s.History, os.O_APPEND|os.O_WRONLY, 0o600)
		require.NoError(t, err)
		_, err = f.WriteString(b.String())
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	out := Script(t, root, "burst.mjs", 3*time.Minute, func(line string) {
		switch line {
		case "ready":
			burst(false)
		case "running":
			burst(true)
		}
	}, "DASH_URL="+s.URL, "DASH_TOKEN="+s.Token, "DASH_SHOTS="+filepath.Join(root, "dist", "screenshots"), fmt.Sprintf("DASH_BURST=%d", n))
	require.Contains(t, out, "ok")
}

// served is an `asyncagents serve` a test started: its URL and token, its history file, and the
// home and project it serves.
type served struct {
	URL, Token, History, Home, Project string
}

// startServe starts `asyncagents serve` over history, in a project of its own.
func startServe(t *testing.T, root, history string) served {
	bin, wasm := filepath.Join(root, "dist", "asyncagents"), filepath.Join(root, "dist", "asyncagents.wasm")
	for _, f := range []string{bin, wasm} {
		_, err := os.Stat(f)
		require.NoError(t, err, "run make build first")
	}
	home := t.TempDir()
	project := filepath.Join(home, "project")
	st := core.StoragePaths("", home, project)
	require.NoError(t, os.MkdirAll(filepath.Dir(st.History), 0o700))
	require.NoError(t, os.WriteFile(st.History, []byte(history), 0o600))

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "serve", "--dir", project, "--wasm", wasm, "--port", fmt.Sprint(port))
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_DATA_HOME=", "ASYNCAGENTS_API_AUTH=")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait(); cancel() })
	lines := bufio.NewScanner(out)
	var url, token string
	for url == "" || token == "" {
		require.True(t, lines.Scan(), "serve stopped before printing its URL and token")
		line := lines.Text()
		if i := strings.Index(line, " at "); i >= 0 && url == "" {
			url = strings.Fields(line[i+4:])[0]
		}
		if v, ok := strings.CutPrefix(line, "token: "); ok {
			token = v
		}
	}
	go func() {
		for lines.Scan() {
		}
	}()
	return served{URL: url, Token: token, History: st.History, Home: home, Project: project}
}
