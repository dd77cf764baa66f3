package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
)

// The parent killed (-9) after an isolated remote task's end was recorded and before its patch
// came home, with a second worktree named for the task on the worker (what a stop during a
// making leaves): at the restart the patch comes home as the task's branch, the parent is told
// of it once, and both worktrees are gone from the worker's clone, their branches too.
//
// The window lasts one diff's round trip, too short to kill the parent in reliably: the parent
// is killed while the child's last answer is held, the child then ends on the worker, and the
// task's records are written as the end's record would have left them (status completed, its
// worktree still named, no merge state). The stray worktree is made through the worker's own API.
func TestWorkerWorktreeLeftByAStopComesHome(t *testing.T) {
	f, last, parent, id := heldRemoteEdit(t, "S", "tool")
	w := f.workers["w1"]
	require.Equal(t, 2, worktreeCount(t, w.Dir), "the task's worktree on the worker")

	f.oc.Kill()
	last.open()
	f.eventually("the child idle on w1 while the parent is down", 60*time.Second, func() bool {
		st, err := w.Status(f.ctx(15 * time.Second))
		return err == nil && len(st) == 0
	})
	recordEnded(t, f, id)
	var stray struct {
		Directory string `json:"directory"`
	}
	require.NoError(t, w.Do(f.ctx(30*time.Second), "POST", "/experimental/worktree", map[string]any{"name": id}, &stray))
	require.True(t, strings.HasPrefix(filepath.Base(stray.Directory), strings.ReplaceAll(id, "_", "-")+"-"), stray.Directory)
	f.eventually("the stray worktree made", 30*time.Second, func() bool { return worktreeCount(t, w.Dir) == 3 })

	f.restartParent(false)
	f.waitWorkersUp()
	f.eventually("the task's notice after the restart", 90*time.Second, func() bool { return f.noticeOf(parent, id) != "" })
	require.Contains(t, f.noticeOf(parent, id), "asyncagents/"+id)
	branch := "asyncagents/" + id
	require.Equal(t, "line one\nedited by S\nline three", gitIn(t, f.oc.Dir, "show", branch+":shared.txt"), "the child's edit came home as its branch")
	// OpenCode deletes a worktree's branch after the worktree: both are waited for.
	f.eventually("both worktrees and their branches gone from the worker", 60*time.Second, func() bool {
		return worktreeCount(t, w.Dir) == 1 && gitIn(t, w.Dir, "for-each-ref", "--format=%(refname:short)", "refs/heads/opencode/") == ""
	})
	f.waitIdle(parent)
	tk, _ := findStoredTask(f.oc, id)
	require.Equal(t, task.StatusCompleted, tk.Status)
	require.Equal(t, task.MergePending, tk.Worktree.Merge)
	require.Empty(t, tk.Worktree.WorkerPath)
	require.Equal(t, 1, f.noticesOf(parent, id), "the parent told once")
}

// heldRemoteEdit starts a fleet of one worker and launches on w1 an isolated task whose child
// edits shared.txt ("edited by <name>"), held by the returned gate at its turn whose last
// message has role at ("user": its first turn; "tool": its last, after the edit); it returns
// once the child is there, with the parent's session and the task's ID.
func heldRemoteEdit(t *testing.T, name, at string) (*fleet, *gate, string, string) {
	t.Helper()
	held := newGate(t)
	call := isolatedCall("Edit "+name, "CHILD edit "+name)
	call.Args["worker"] = "w1"
	edit := isolationScript(map[string][]mockmodel.ToolCall{"LAUNCH REMOTE": {call}})
	f := startFleet(t, func(req mockmodel.Request) mockmodel.Reply {
		if firstUser(req) == "CHILD edit "+name && lastRole(req) == at {
			held.wait(120 * time.Second)
		}
		return edit(req)
	}, fleetOptions{workers: 1})
	f.waitWorkersUp()
	parent := f.prompt("LAUNCH REMOTE")
	id := f.launchedTasks(parent, 1)[0]
	f.childAt("CHILD edit "+name, at)
	return f, held, parent, id
}

// worktreeCount is how many worktrees git lists in the clone dir, its own included.
func worktreeCount(t *testing.T, dir string) int {
	return strings.Count(gitIn(t, dir, "worktree", "list", "--porcelain"), "worktree ")
}

// recordEnded rewrites task id's records that name its worktree on the worker as the record of
// its end: completed with the child's answer, nothing of its changes home yet.
func recordEnded(t *testing.T, f *fleet, id string) {
	t.Helper()
	changed := 0
	editTaskRecords(t, storageOf(f.oc), id, func(r *task.Task, line, _ string) string {
		if r.Worktree == nil || r.Worktree.WorkerPath == "" {
			return line
		}
		changed++
		r.Status, r.Result, r.CompletedAt = task.StatusCompleted, "child done", time.Now().UnixMilli()
		return core.HistoryLine(*r)
	})
	require.NotZero(t, changed, "the history names task %s's worktree on the worker", id)
}

// The parent killed (-9) while an isolated remote task's worktree was being made: at the restart
// the task waits for the worker's list, the worktree that making left is removed, a new one is
// made, and the task runs there; its branch arrives, and the worker keeps no worktree of it.
//
// Staged as in the test above: the parent is killed while the child's first turn is held, the
// child session is deleted on the worker, and the task's records that name its session or its
// worktree there are dropped, so the history holds the task as launched, its worktree not made.
func TestWorkerWorktreeMadeAtAStopIsRemoved(t *testing.T) {
	f, first, parent, id := heldRemoteEdit(t, "T", "user")
	w := f.workers["w1"]
	tk, _ := findStoredTask(f.oc, id)
	require.NotEmpty(t, tk.SessionID)
	require.NotNil(t, tk.Worktree)
	left := tk.Worktree.WorkerPath
	require.NotEmpty(t, left, "the worktree made on the worker")

	f.oc.Kill()
	require.NoError(t, w.Abort(f.ctx(15*time.Second), tk.SessionID))
	require.NoError(t, w.Do(f.ctx(15*time.Second), "DELETE", "/session/"+tk.SessionID, nil, nil))
	first.open()
	dropped := 0
	editTaskRecords(t, storageOf(f.oc), id, func(r *task.Task, line, _ string) string {
		if r.SessionID != "" || (r.Worktree != nil && r.Worktree.WorkerPath != "") {
			dropped++
			return ""
		}
		return line
	})
	require.NotZero(t, dropped)
	require.Equal(t, 2, worktreeCount(t, w.Dir), "the making's worktree is on the worker")

	f.restartParent(false)
	f.waitWorkersUp()
	f.eventually("the task's notice after the restart", 120*time.Second, func() bool { return f.noticeOf(parent, id) != "" })
	require.Contains(t, f.noticeOf(parent, id), "asyncagents/"+id)
	require.Equal(t, "line one\nedited by T\nline three", gitIn(t, f.oc.Dir, "show", "asyncagents/"+id+":shared.txt"))
	f.eventually("no worktree of the task left on the worker", 60*time.Second, func() bool {
		return worktreeCount(t, w.Dir) == 1 && gitIn(t, w.Dir, "for-each-ref", "--format=%(refname:short)", "refs/heads/opencode/") == ""
	})
	require.NoDirExists(t, left)
	f.waitIdle(parent)
	require.Equal(t, 1, f.noticesOf(parent, id), "the parent told once")
}
