package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// The history binds a task to its child session, but OpenCode stopped before the child's prompt
// was stored: the child holds no message. Staged with OpenCode killed (-9) while the child is
// held at its model call, and the task's records pointed at an empty child session of the same
// parent. The restart gives that child the task's prompt, and the task completes with its
// result in one notice, where it used to end as interrupted.
func TestARestartPromptsARecordedChildThatNeverGotItsPrompt(t *testing.T) {
	held := newGate(t)
	script := childScript(map[string]func(mockmodel.Request) mockmodel.Reply{
		"CHILD late": func(mockmodel.Request) mockmodel.Reply {
			held.wait(120 * time.Second)
			return mockmodel.Reply{Text: "the late result"}
		},
	}, map[string][]mockmodel.ToolCall{"LAUNCH": {taskCall("late", "CHILD late", "general")}})
	e := start(t, script)
	parent := e.prompt("LAUNCH")
	id := e.launchedTasks(parent, 1)[0]
	first := e.sessionOf(id)
	_, err := e.model.WaitFor(e.ctx(60*time.Second), func(r mockmodel.Request) bool { return firstUser(r) == "CHILD late" })
	require.NoError(t, err)
	var empty ocserve.SessionInfo
	require.NoError(t, e.oc.Do(e.ctx(15*time.Second), "POST", "/session", map[string]any{"parentID": parent, "title": "late"}, &empty))

	e.oc.Kill()
	held.open()
	rebindSession(t, storageOf(e.oc), id, first, empty.ID)
	e.oc = ocserve.Restart(t, e.oc, ocserve.Options{ModelURL: e.model.URL(), Plugins: []string{ocserve.PluginSpec(t)}})
	_, err = e.oc.CreateSession(e.ctx(30*time.Second), "loads the project, and the plugin with it")
	require.NoError(t, err)

	e.eventually("the task's notice", 90*time.Second, func() bool { return e.noticeOf(parent, id) != "" })
	tk, _ := findStoredTask(e.oc, id)
	require.Equal(t, empty.ID, tk.SessionID)
	require.Equal(t, task.StatusCompleted, tk.Status, "not interrupted: %+v", tk.Error)
	require.Equal(t, "the late result", tk.Result)
	require.Equal(t, 1, e.noticesOf(parent, id), "the parent told once")
	msgs, err := e.oc.Messages(e.ctx(15*time.Second), empty.ID)
	require.NoError(t, err)
	require.NotEmpty(t, msgs)
	require.Equal(t, "user", msgs[0].Info.Role, "the child got the task's prompt")
}

// rebindSession points every record of task id that names session from at session to
// (checksummed anew), and removes the indexes that describe the logs.
func rebindSession(t *testing.T, st core.Storage, id, from, to string) {
	t.Helper()
	changed := 0
	editTaskRecords(t, st, id, func(r *task.Task, line, body string) string {
		if r.SessionID != from {
			return line
		}
		changed++
		return core.ChecksummedLine(strings.ReplaceAll(body, `"`+from+`"`, `"`+to+`"`))
	})
	require.NotZero(t, changed, "the history names task %s's session", id)
}
