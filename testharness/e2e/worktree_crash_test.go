package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// A kill -9 while a worktree is being created: the executor is held (its test hook) between
// `git worktree add` and its reply, OpenCode is killed there, and after a restart no worktree,
// folder or branch exists that the history does not list.
func TestWorktreeCreationCrashIsReconciled(t *testing.T) {
	hold := filepath.Join(t.TempDir(), "held")
	script := isolationScript(map[string][]mockmodel.ToolCall{"LAUNCH ONE": {isolatedCall("Edit A", "CHILD edit A")}})
	e := startIsolated(t, script, "ASYNCAGENTS_TEST_HOLD_WORKTREE="+hold)
	parent := e.prompt("LAUNCH ONE")
	e.eventually("the executor held after worktree add", 60*time.Second, func() bool { _, err := os.Stat(hold); return err == nil })
	require.Len(t, linkedWorktrees(t, e.oc.Dir), 1, "the worktree exists when OpenCode dies")
	e.oc.Kill()
	<-e.oc.Exited()

	oc := ocserve.Restart(t, e.oc, ocserve.Options{ModelURL: e.model.URL(), Plugins: []string{ocserve.PluginSpec(t)}, Files: isolatedFiles})
	e.oc = oc
	// A worktree's folder and branch are named after its task (the contract).
	listed := func(id string) bool { task, ok := findStoredTask(oc, id); return ok && task.ID == id }
	e.eventually("the start's reconciliation", 60*time.Second, func() bool {
		for _, p := range append(linkedWorktrees(t, oc.Dir), worktreeFolders(oc)...) {
			if !listed(filepath.Base(p)) {
				return false
			}
		}
		for _, b := range ourBranches(t, oc.Dir) {
			if !listed(strings.TrimPrefix(b, "asyncagents/")) {
				return false
			}
		}
		return true
	})
	// The task held at its creation is made again from scratch (what the crash left is removed
	// first), runs, and its notice reaches the parent with its branch.
	id := e.launchedTasks(parent, 1)[0]
	e.eventually("the held task's notice", 90*time.Second, func() bool { return e.noticeOf(parent, id) != "" })
	task, _ := findStoredTask(oc, id)
	require.Equal(t, "completed", string(task.Status), "the task held at its creation ran after the restart: %s", e.noticeOf(parent, id))
	require.Contains(t, e.noticeOf(parent, id), "asyncagents/"+id)
	require.Equal(t, []string{"asyncagents/" + id}, ourBranches(t, oc.Dir))
}

// An isolated launch in a folder that is no git repository gets a clear error and creates
// nothing: no worktrees folder, no task left running.
func TestIsolatedLaunchWithoutGit(t *testing.T) {
	model := mockmodel.Start(t, isolationScript(map[string][]mockmodel.ToolCall{"LAUNCH ONE": {isolatedCall("Edit A", "CHILD edit A")}}))
	oc := ocserve.Start(t, ocserve.Options{ModelURL: model.URL(), Plugins: []string{ocserve.PluginSpec(t)}, NoGit: true})
	e := &env{t: t, model: model, oc: oc}
	parent := e.prompt("LAUNCH ONE")
	var said string
	e.eventually("the refusal or the failure notice", 90*time.Second, func() bool {
		for _, r := range e.toolResults(parent, "asyncagents_task") {
			if strings.Contains(r, "not a git repository") {
				said = r
			}
		}
		for _, n := range e.notices(parent) {
			if strings.Contains(n.visible+n.hidden, "not a git repository") {
				said = n.visible + n.hidden
			}
		}
		return said != ""
	})
	require.Contains(t, said, "not a git repository")
	require.Empty(t, worktreeFolders(oc), "nothing was created")
	_, err := os.Stat(filepath.Join(oc.Dir, ".git"))
	require.True(t, os.IsNotExist(err), "no repository was made either")
}
