package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// `asyncagents serve` (the Go binary and the npm CLI) with three workers configured and no
// plugin running: it follows no stream but asks each worker's health itself, so /v1/workers and
// `asyncagents workers` show w1 (a real worker) reachable with its OpenCode version, w2 (a dead
// port) unreachable with the reason, w3 (w1 with a wrong password) unreachable naming the 401,
// and each stream as not followed. No password shows in serve's output or its answers.
func TestServeShowsEachWorkersHealth(t *testing.T) {
	model := mockmodel.Start(t, func(mockmodel.Request) mockmodel.Reply { return mockmodel.Reply{Text: "ok"} })
	project := ocserve.Prepare(t, ocserve.Options{ModelURL: model.URL()})
	w := ocserve.StartWorker(t, ocserve.WorkerOptions{ModelURL: model.URL(), CloneOf: project.Dir})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now
	wrong := ocserve.RandomPassword(t)
	cfg, err := json.Marshal(map[string]any{"workers": map[string]any{
		"w1": map[string]any{"url": w.URL, "passwordEnv": "W1_PASSWORD", "directory": w.Dir},
		"w2": map[string]any{"url": dead, "passwordEnv": "W2_PASSWORD", "directory": w.Dir},
		"w3": map[string]any{"url": w.URL, "passwordEnv": "W3_PASSWORD", "directory": w.Dir},
	}})
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(project.Dir, ".opencode"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(project.Dir, ".opencode", "asyncagents.json"), cfg, 0o644))
	env := append(project.Env(), "W1_PASSWORD="+w.Password(), "W2_PASSWORD="+w.Password(), "W3_PASSWORD="+wrong)

	root := ocserve.RepoRoot(t)
	dist := filepath.Join(root, "dist")
	for _, c := range []struct{ name, cli string }{{"go", filepath.Join(dist, "asyncagents")}, {"npm", "npm"}} {
		argv := []string{c.cli, "serve", "--project", project.Dir, "--port", strconv.Itoa(freeTCPPort(t)), "--wasm", filepath.Join(dist, "asyncagents.wasm")}
		workers := []string{c.cli, "workers", "--project", project.Dir, "--wasm", filepath.Join(dist, "asyncagents.wasm")}
		if c.name == "npm" {
			bun := filepath.Join(root, "node_modules", ".bin", "bun")
			argv = []string{bun, filepath.Join(dist, "asyncagents-cli.js"), "serve", "--project", project.Dir, "--port", argv[5]}
			workers = []string{bun, filepath.Join(dist, "asyncagents-cli.js"), "workers", "--project", project.Dir}
		}
		url, token, output, stop := startServe(t, argv, env)
		var views map[string]core.WorkerInfo
		var body string
		boundedWait(t, c.name+": every worker's health in serve's /v1/workers", 30*time.Second, func() bool {
			code, b := apiGet(t, url+"/v1/workers", token, "")
			var v struct{ Workers []core.WorkerInfo }
			if code != 200 || json.Unmarshal([]byte(b), &v) != nil {
				return false
			}
			views, body = map[string]core.WorkerInfo{}, b
			for _, wi := range v.Workers {
				views[wi.Name] = wi
			}
			return views["w1"].Health == core.WorkerReachable && views["w2"].Health == core.WorkerUnreachable && views["w3"].Health == core.WorkerUnreachable
		})
		t.Logf("%s serve /v1/workers: %s", c.name, body)
		for _, n := range []string{"w1", "w2", "w3"} {
			require.Equal(t, core.WorkerNotFollowed, views[n].State, "%s %s: no stream is followed", c.name, n)
		}
		require.Equal(t, "1.18.33", views["w1"].Version, c.name)
		require.Equal(t, "connection refused", views["w2"].HealthError, c.name)
		require.Equal(t, "wrong username or password (401)", views["w3"].HealthError, c.name)

		table := runBounded(t, workers, env)
		t.Logf("%s workers:\n%s", c.name, table)
		require.Regexp(t, `(?m)^w1 +`+regexp.QuoteMeta(w.URL)+` +0/\d+ +0 +1\.18\.33 +reachable for \S+$`, table, c.name)
		require.Regexp(t, `(?m)^w2 +`+regexp.QuoteMeta(dead)+` .* unreachable for \S+: connection refused$`, table, c.name)
		require.Regexp(t, `(?m)^w3 .* unreachable for \S+: wrong username or password \(401\)$`, table, c.name)
		require.Contains(t, table, "Read-only view (asyncagents serve): no worker's stream is followed", c.name)
		for _, secret := range []string{w.Password(), wrong} {
			for what, text := range map[string]string{"/v1/workers": body, "workers": table, "serve's output": output()} {
				require.NotContains(t, text, secret, "%s: the password in %s", c.name, what)
			}
		}
		stop() // the next CLI's `asyncagents workers` must find its own serve
	}
}

// boundedWait polls cond every 200 ms until it holds or the bound passes (env.eventually, for a
// test with no OpenCode of its own to show the logs of).
func boundedWait(t *testing.T, what string, bound time.Duration, cond func() bool) {
	t.Helper()
	if !pollUntil(bound, cond) {
		t.Fatalf("timed out after %s waiting for %s", bound, what)
	}
}

// stopGroup ends cmd's process group as a terminal would (SIGINT), and kills it when it has not
// ended 10 s later; it returns once cmd has been waited for.
func stopGroup(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// startServe starts `asyncagents serve` (argv), stopped at the test's end, and returns its URL,
// its token, what it has written so far (stdout and stderr), and a stop (SIGINT, then SIGKILL
// after 10 s).
func startServe(t *testing.T, argv, env []string) (url, token string, output func() string, stop func()) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var mu sync.Mutex
	var out bytes.Buffer
	cmd.Stderr = lockedWriter{&mu, &out}
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var once sync.Once
	stop = func() { once.Do(func() { stopGroup(cmd) }) }
	t.Cleanup(stop)
	found := make(chan [2]string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		var u string
		for sc.Scan() {
			line := sc.Text()
			mu.Lock()
			out.WriteString(line + "\n")
			mu.Unlock()
			if m := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+) \(read-only\)`).FindStringSubmatch(line); m != nil {
				u = m[1]
			}
			if tok, ok := strings.CutPrefix(line, "token: "); ok && u != "" {
				found <- [2]string{u, tok}
			}
		}
	}()
	output = func() string { mu.Lock(); defer mu.Unlock(); return out.String() }
	select {
	case f := <-found:
		return f[0], f[1], output, stop
	case <-time.After(60 * time.Second):
		t.Fatalf("serve printed no URL and token within 60 s: %s", output())
	}
	return "", "", output, stop
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// runBounded runs argv to its end, at most 60 s, and returns its output; it must succeed.
func runBounded(t *testing.T, argv, env []string) string {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.WaitDelay = 5 * time.Second
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("%s: no end within 60 s", argv[0])
	}
	require.NoError(t, err, "%s", out)
	return string(out)
}
