package e2e

import (
	"encoding/json"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// The record that binds a task to its child session never reached the history (a full disk, or a
// crash between OpenCode's answer and the record), nor did anything after it: the history holds
// the task launched, with no session. Staged by removing those lines, OpenCode down, after the
// child answered and the parent was told. The restart finds the child OpenCode made for the task
// (its metadata names the task) and adopts it: no second child is made, the task ends with the
// child's result, and the parent, told before the restart, is not told again.
func TestARestartAdoptsTheChildWhoseRecordWasLost(t *testing.T) {
	script := func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD adopted":
			return mockmodel.Reply{Text: "the adopted result"}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "LAUNCH":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("orphan", "CHILD adopted", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	}
	e := start(t, script)
	parent := e.prompt("LAUNCH")
	id := e.launchedTasks(parent, 1)[0]
	e.eventually("the parent told, the notice recorded as taken", 60*time.Second, func() bool {
		tk, _ := findStoredTask(e.oc, id)
		return e.noticesOf(parent, id) == 1 && tk.Status == task.StatusCompleted && tk.NoticeOwed == 0
	})
	child := e.sessionOf(id)
	e.waitIdle(parent)

	e.oc.Kill()
	dropSessionRecords(t, storageOf(e.oc), id)
	e.oc = ocserve.Restart(t, e.oc, ocserve.Options{ModelURL: e.model.URL(), Plugins: []string{ocserve.PluginSpec(t)}})
	_, err := e.oc.CreateSession(e.ctx(30*time.Second), "loads the project, and the plugin with it")
	require.NoError(t, err)

	e.eventually("the task ended again, its notice settled", 60*time.Second, func() bool {
		tk, _ := findStoredTask(e.oc, id)
		return tk.Status.Terminal() && tk.NoticeOwed == 0
	})
	tk, _ := findStoredTask(e.oc, id)
	require.Equal(t, child, tk.SessionID, "the task kept the child OpenCode made for it")
	require.Equal(t, task.StatusCompleted, tk.Status)
	require.Equal(t, "the adopted result", tk.Result)
	children, err := e.oc.Children(e.ctx(15*time.Second), parent)
	require.NoError(t, err)
	require.Len(t, children, 1, "no second child for the task")
	require.Equal(t, 1, e.noticesOf(parent, id), "the parent told once")
	require.Contains(t, e.oc.Logs(), "adopted its child session "+child)
}

// The same on a worker, where the child works on while the parent is down: the parent killed
// (-9) with the remote child held at its model call, the record binding it removed, the parent
// started again. The child is found on the worker by its title and metadata (the worker holds no
// parent session to list children of) and adopted while it still runs: released, its result
// reaches the parent once, and the worker holds one child for the task.
func TestWorkerRestartAdoptsTheRemoteChildWhoseRecordWasLost(t *testing.T) {
	held := newGate(t)
	f := startFleet(t, childScript(map[string]func(mockmodel.Request) mockmodel.Reply{
		"CHILD far": func(mockmodel.Request) mockmodel.Reply {
			held.wait(120 * time.Second)
			return mockmodel.Reply{Text: "the far result"}
		},
	}, map[string][]mockmodel.ToolCall{"LAUNCH": {remoteCall("far orphan", "CHILD far", "w1")}}), fleetOptions{workers: 1})
	f.waitWorkersUp()
	parent := f.prompt("LAUNCH")
	id := f.launchedTasks(parent, 1)[0]
	child := f.sessionOf(id)
	f.childAt("CHILD far", "user")
	f.waitIdle(parent)

	f.oc.Kill()
	dropSessionRecords(t, storageOf(f.oc), id)
	f.restartParent(false)
	f.waitWorkersUp()
	f.eventually("the task adopted", 60*time.Second, func() bool {
		tk, _ := findStoredTask(f.oc, id)
		return tk.SessionID != ""
	})
	held.open()
	f.eventually("the notice", 90*time.Second, func() bool { return f.noticeOf(parent, id) != "" })
	f.waitIdle(parent)
	tk, _ := findStoredTask(f.oc, id)
	require.Equal(t, child, tk.SessionID, "the task kept the child the worker made for it")
	require.Equal(t, task.StatusCompleted, tk.Status)
	require.Equal(t, "the far result", tk.Result)
	require.Equal(t, 1, f.noticesOf(parent, id), "the parent told once")
	var onWorker []ocserve.SessionInfo
	require.NoError(t, f.workers["w1"].Do(f.ctx(15*time.Second), "GET", "/session?search="+url.QueryEscape("far orphan"), nil, &onWorker))
	require.Len(t, onWorker, 1, "no second child on the worker")
	require.Empty(t, onWorker[0].ParentID, "the parent session is this machine's: none on the worker")
}

// dropSessionRecords removes from the project's logs every line of task id that names its
// session, and the indexes that describe the logs: the history then holds the task as launched,
// its session not yet made. The task's launch line must be left.
func dropSessionRecords(t *testing.T, st core.Storage, id string) {
	t.Helper()
	left := 0
	editTaskRecords(t, st, id, func(r *task.Task, line, _ string) string {
		if r.SessionID != "" {
			return ""
		}
		left++
		return line
	})
	require.NotZero(t, left, "the history keeps task %s's launch", id)
}

// editTaskRecords rewrites every line of task id in the project's logs as edit says (the line as
// it is, another, or "" to drop it; body is its record's JSON), and removes the indexes that
// describe the logs.
func editTaskRecords(t *testing.T, st core.Storage, id string, edit func(r *task.Task, line, body string) string) {
	t.Helper()
	for _, path := range historyFiles(st, "log") {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		var kept strings.Builder
		for _, line := range strings.SplitAfter(string(b), "\n") {
			_, body, _ := strings.Cut(line, " ")
			var r struct {
				Task *task.Task `json:"task"`
			}
			if json.Unmarshal([]byte(body), &r) == nil && r.Task != nil && r.Task.ID == id {
				line = edit(r.Task, line, strings.TrimSuffix(body, "\n"))
			}
			kept.WriteString(line)
		}
		require.NoError(t, os.WriteFile(path, []byte(kept.String()), 0o600))
	}
	for _, idx := range historyFiles(st, "idx") {
		require.NoError(t, os.Remove(idx))
	}
}
