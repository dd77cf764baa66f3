package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// mountTmpfs mounts a tmpfs of size at dir (made if missing), with extra mount options, and
// unmounts it when the test ends. The test fails, naming why, when it cannot mount (it needs root).
func mountTmpfs(t *testing.T, dir, size string, extra ...string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o700))
	opts := strings.Join(append([]string{"size=" + size}, extra...), ",")
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("cannot mount a tmpfs at %s (the test needs root): %v: %s", dir, err, out)
	}
	t.Cleanup(func() {
		// Lazy: OpenCode may still hold the folder while the test's other cleanups stop it.
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("unmounting %s: %v: %s", dir, err, out)
		}
	})
}

// fillUp writes a filler file in dir until the file system is full, and returns its path.
func fillUp(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	block := make([]byte, 1024)
	for range 1 << 20 { // bounded: far more than any tmpfs this test mounts
		if _, err := f.Write(block); err != nil {
			require.True(t, errors.Is(err, syscall.ENOSPC), "filling up: %v", err)
			return path
		}
	}
	t.Fatalf("%s never filled up", dir)
	return ""
}

// startOnStorage starts OpenCode with the plugin's status API on a free port, without a token,
// and has prepare set up the plugin's storage folder before the plugin loads (on the first
// request for the project).
func startOnStorage(t *testing.T, script mockmodel.Script, prepare func(st core.Storage)) (*env, int, ocserve.Options) {
	t.Helper()
	port := freeTCPPort(t)
	model := mockmodel.Start(t, script)
	opt := ocserve.Options{ModelURL: model.URL(), Plugins: []string{ocserve.PluginSpec(t)},
		Env: []string{fmt.Sprintf("ASYNCAGENTS_API_PORT=%d", port), "ASYNCAGENTS_API_AUTH=none"}}
	oc := ocserve.Start(t, opt)
	prepare(storageOf(oc))
	return &env{t: t, model: model, oc: oc}, port, opt
}

// health is the plugin's /v1/health answer ("" status while it does not answer).
type healthAnswer struct {
	Status string `json:"status"`
	Reason string `json:"reason"`
}

func healthOf(t *testing.T, port int) healthAnswer {
	var h healthAnswer
	code, body := apiGetMaybe(fmt.Sprintf("http://127.0.0.1:%d/v1/health", port))
	if code == 200 {
		_ = json.Unmarshal([]byte(body), &h)
	}
	return h
}

// apiGetMaybe GETs url: its status and body, 0 when it does not answer.
func apiGetMaybe(url string) (int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return 0, ""
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, ""
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// apiTaskList is the plugin's task list (nil while it does not answer).
func apiTaskList(port int) []task.Task {
	code, body := apiGetMaybe(fmt.Sprintf("http://127.0.0.1:%d/v1/tasks?limit=100", port))
	var list struct {
		Tasks []task.Task `json:"tasks"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &list) != nil {
		return nil
	}
	// The list leaves out prompts and results: each task's own answer has them.
	for i, tk := range list.Tasks {
		code, body := apiGetMaybe(fmt.Sprintf("http://127.0.0.1:%d/v1/tasks/%s", port, tk.ID))
		if code != 200 || json.Unmarshal([]byte(body), &list.Tasks[i]) != nil {
			return nil
		}
	}
	return list.Tasks
}

// gatedScript launches n tasks on "LAUNCH"; each child answers "result <i>" once g opens.
func gatedScript(n int, g *gate) mockmodel.Script {
	return func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case strings.HasPrefix(req.LastUser, "CHILD "):
			g.wait(2 * time.Minute)
			return mockmodel.Reply{Text: "result " + strings.TrimPrefix(req.LastUser, "CHILD ")}
		case req.LastUser == "LAUNCH" && lastRole(req) == "user":
			var calls []mockmodel.ToolCall
			for i := range n {
				calls = append(calls, taskCall(fmt.Sprintf("filler %d", i), fmt.Sprintf("CHILD %d", i), "general"))
			}
			return mockmodel.Reply{ToolCalls: calls}
		}
		return mockmodel.Reply{Text: "ok"}
	}
}

// The data folder on a 64 KB tmpfs that fills up while three tasks run. Their ends cannot be
// written: each notice arrives once, with a warning the user sees, /v1/health is degraded with
// the error, and a restart while still full finds the tasks' ends from OpenCode without telling
// the parent twice. Once there is space, the history is written whole: a second restart knows
// every result, and no notice came twice.
func TestFullDiskLosesNothingAndSaysSo(t *testing.T) {
	const n = 3
	g := newGate(t)
	var st core.Storage
	e, port, opt := startOnStorage(t, gatedScript(n, g), func(s core.Storage) {
		st = s
		mountTmpfs(t, s.Dir, "64k")
	})
	parent := e.prompt("LAUNCH")
	var ids []string
	e.eventually("the launches", 60*time.Second, func() bool {
		parts := e.toolParts(parent, "asyncagents_task")
		return len(parts) == n && finishedParts(parts)
	})
	for _, p := range e.toolParts(parent, "asyncagents_task") {
		ids = append(ids, idOf(p))
	}
	// Recorded whole: each task with its session. A session record left unwritten is the lost
	// record TestARestartAdoptsTheChildWhoseRecordWasLost stages; here the disk fills after it.
	e.eventually("the launches in the history, with their sessions", 30*time.Second, func() bool {
		for _, id := range ids {
			if tk, _ := findStoredTask(e.oc, id); tk.SessionID == "" {
				return false
			}
		}
		return true
	})
	filler := fillUp(t, st.Dir)
	g.open()

	e.eventually("every notice", 90*time.Second, func() bool { return len(e.notices(parent)) == n })
	warned := false
	for _, m := range e.messages(parent) {
		for _, p := range m.Parts {
			warned = warned || (!p.Synthetic && strings.Contains(p.Text, "could not write its task history (ENOSPC"))
		}
	}
	require.True(t, warned, "the parent sees that the history could not be written")
	h := healthOf(t, port)
	require.Equal(t, "degraded", h.Status)
	require.Contains(t, h.Reason, "ENOSPC")
	e.waitIdle(parent)

	// A restart while the disk is still full: the history holds the tasks as running.
	e.oc = ocserve.Restart(t, e.oc, opt)
	_, err := e.oc.CreateSession(e.ctx(30*time.Second), "warm-up") // the plugin loads
	require.NoError(t, err)
	settled := func() bool {
		tasks := apiTaskList(port)
		done := 0
		for _, tk := range tasks {
			if tk.Status == task.StatusCompleted && tk.NoticeOwed == 0 && strings.HasPrefix(tk.Result, "result ") {
				done++
			}
		}
		return done == n
	}
	e.eventually("the restored tasks ended from OpenCode, their notices settled", 90*time.Second, settled)
	for _, id := range ids {
		require.Equal(t, 1, e.noticesOf(parent, id), "task %s told once", id)
	}
	require.Equal(t, "degraded", healthOf(t, port).Status, "still full")

	// Space again: the retry writes what is held, and the health is ok.
	require.NoError(t, os.Remove(filler))
	e.eventually("the history written again", 90*time.Second, func() bool { return healthOf(t, port).Status == "ok" })
	logs, _ := filepath.Glob(filepath.Join(st.Dir, "history-*.log"))
	require.Len(t, logs, 1)
	written, err := os.ReadFile(logs[0])
	require.NoError(t, err)
	for i := range n {
		require.Contains(t, string(written), fmt.Sprintf(`"result":"result %d"`, i))
	}

	e.oc = ocserve.Restart(t, e.oc, opt)
	_, err = e.oc.CreateSession(e.ctx(30*time.Second), "warm-up")
	require.NoError(t, err)
	e.eventually("every result after the second restart", 60*time.Second, settled)
	require.Equal(t, "ok", healthOf(t, port).Status)
	for _, id := range ids {
		require.Equal(t, 1, e.noticesOf(parent, id), "task %s told once", id)
	}
}

// A read-only data folder: a task still runs, its result is held in memory, and the parent and
// /v1/health say the history cannot be written.
func TestReadOnlyDataFolderStillRunsTasks(t *testing.T) {
	g := newGate(t)
	g.open()
	e, port, _ := startOnStorage(t, gatedScript(1, g), func(s core.Storage) { mountTmpfs(t, s.Dir, "64k", "ro") })
	parent := e.prompt("LAUNCH")
	e.eventually("the notice", 90*time.Second, func() bool { return len(e.notices(parent)) == 1 })
	n := e.notices(parent)[0]
	require.Regexp(t, `^✓ Agent "filler 0" finished in `, n.visible)
	require.Contains(t, n.hidden, "<task_result>\nresult 0\n</task_result>")
	warned := false
	for _, m := range e.messages(parent) {
		for _, p := range m.Parts {
			warned = warned || (!p.Synthetic && strings.Contains(p.Text, "could not write its task history"))
		}
	}
	require.True(t, warned, "the parent is told")
	h := healthOf(t, port)
	require.Equal(t, "degraded", h.Status)
	require.Contains(t, h.Reason, "cannot be written")
}
