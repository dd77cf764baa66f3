package e2e

import (
	"encoding/json"
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
	var id string
	e.eventually("the launch", 60*time.Second, func() bool {
		parts := e.toolParts(parent, "asyncagents_task")
		if len(parts) == 1 && finishedParts(parts) {
			id = idOf(parts[0])
		}
		return id != ""
	})
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

// dropSessionRecords removes from the project's logs every line of task id that names its
// session, and the indexes that describe the logs: the history then holds the task as launched,
// its session not yet made. The task's launch line must be left.
func dropSessionRecords(t *testing.T, st core.Storage, id string) {
	t.Helper()
	left := 0
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
				if r.Task.SessionID != "" {
					continue
				}
				left++
			}
			kept.WriteString(line)
		}
		require.NoError(t, os.WriteFile(path, []byte(kept.String()), 0o600))
	}
	require.NotZero(t, left, "the history keeps task %s's launch", id)
	for _, idx := range historyFiles(st, "idx") {
		require.NoError(t, os.Remove(idx))
	}
}
