package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
)

// isolationScript: the parent launches what its prompt names, merges on "MERGE <id>"; a child
// "CHILD edit X" writes shared.txt's second line with the shell, "CHILD look" reads notes.txt,
// "CHILD idle" only answers.
func isolationScript(launch map[string][]mockmodel.ToolCall) mockmodel.Script {
	return func(req mockmodel.Request) mockmodel.Reply {
		first := firstUser(req)
		switch {
		case strings.HasPrefix(first, "CHILD edit ") && lastRole(req) == "user":
			return childEdit("edited by " + strings.TrimPrefix(first, "CHILD edit "))
		case strings.HasPrefix(first, "CHILD look") && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "bash", Args: map[string]any{"command": "pwd; cat notes.txt", "description": "look"}}}}
		case strings.HasPrefix(first, "CHILD"):
			return mockmodel.Reply{Text: "child done"}
		case strings.HasPrefix(req.LastUser, "MERGE ") && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "asyncagents_merge", Args: map[string]any{"task_id": strings.TrimPrefix(req.LastUser, "MERGE ")}}}}
		case launch[req.LastUser] != nil && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: launch[req.LastUser]}
		}
		return mockmodel.Reply{Text: "Noted."}
	}
}

// endTogether holds the final answer of each "CHILD edit" child until n of them ask for it, then
// gives them all at once (bounded): the children end together, and the core gets both ends while
// the first one's commit is under way.
func endTogether(t *testing.T, script mockmodel.Script, n int) mockmodel.Script {
	all := newGate(t)
	var mu sync.Mutex
	waiting := 0
	return func(req mockmodel.Request) mockmodel.Reply {
		if strings.HasPrefix(firstUser(req), "CHILD edit ") && lastRole(req) != "user" {
			mu.Lock()
			if waiting++; waiting == n {
				all.open()
			}
			mu.Unlock()
			all.wait(60 * time.Second)
		}
		return script(req)
	}
}

// launchedTasks waits for the parent's n launch answers and returns their task IDs, in order.
func (e *env) launchedTasks(parent string, n int) []string {
	e.t.Helper()
	var ids []string
	e.eventually("the launch answers", 60*time.Second, func() bool {
		ids = nil
		for _, out := range e.toolResults(parent, "asyncagents_task") {
			if m := taskIDLine.FindStringSubmatch(out); m != nil {
				ids = append(ids, m[1])
			}
		}
		return len(ids) == n
	})
	return ids
}

// turnsOf counts the model turns of the children whose prompt is prompt.
func (e *env) turnsOf(prompt string) int {
	n := 0
	for _, r := range e.model.Turns() {
		if firstUser(r) == prompt {
			n++
		}
	}
	return n
}

// noticeOf is the parent's notice of task id, its visible and hidden text together.
func (e *env) noticeOf(parent, id string) string {
	for _, n := range e.notices(parent) {
		if strings.Contains(n.hidden, "task_id: "+id+"\n") {
			return n.visible + "\n" + n.hidden
		}
	}
	return ""
}

// Isolation and the merge: two isolated children change the same line of the same file. The
// parent's tree is unchanged, each branch holds its own edit and each notice names the overlap.
// Merging the first applies it; once the user committed it, merging the second conflicts and
// leaves the tree byte for byte as it was, its branch kept.
func TestIsolatedChildrenAndTheirMerge(t *testing.T) {
	e := startIsolated(t, endTogether(t, isolationScript(map[string][]mockmodel.ToolCall{
		"LAUNCH TWO": {isolatedCall("Edit A", "CHILD edit A"), isolatedCall("Edit B", "CHILD edit B")},
	}), 2))
	before := treeBytes(t, e.oc.Dir)
	parent := e.prompt("LAUNCH TWO")
	ids := e.launchedTasks(parent, 2)
	e.eventually("both notices", 120*time.Second, func() bool { return e.noticeOf(parent, ids[0]) != "" && e.noticeOf(parent, ids[1]) != "" })
	require.Equal(t, before, treeBytes(t, e.oc.Dir), "the children's edits never reached the parent's tree")
	for i, id := range ids {
		other, name := ids[1-i], []string{"A", "B"}[i]
		require.Contains(t, ourBranches(t, e.oc.Dir), "asyncagents/"+id, "each child's branch; its notice: %s\nits child's model turns: %d", e.noticeOf(parent, id), e.turnsOf("CHILD edit "+name))
		require.Equal(t, "line one\nedited by "+name+"\nline three", gitIn(t, e.oc.Dir, "show", "asyncagents/"+id+":shared.txt"))
		require.Equal(t, strings.TrimSpace(parentEdit), gitIn(t, e.oc.Dir, "show", "asyncagents/"+id+":notes.txt"), "the branch started from the parent's tree")
		n := e.noticeOf(parent, id)
		require.Contains(t, n, "asyncagents/"+id)
		require.Contains(t, n, "shared.txt +1 −1")
		require.Contains(t, n, "also changed by "+other+": shared.txt", "each notice names the overlap")
	}
	e.waitIdle(parent)

	e.promptIn(parent, "MERGE "+ids[0])
	e.eventually("the first merge", 60*time.Second, func() bool { return len(e.toolResults(parent, "asyncagents_merge")) == 1 })
	first := e.toolResults(parent, "asyncagents_merge")[0]
	require.NotContains(t, first, "ERROR", first)
	got, _ := os.ReadFile(filepath.Join(e.oc.Dir, "shared.txt"))
	require.Equal(t, "line one\nedited by A\nline three\n", string(got))
	require.Equal(t, parentEdit, readFile(t, filepath.Join(e.oc.Dir, "notes.txt")), "the parent's own edit is kept")
	require.Empty(t, gitIn(t, e.oc.Dir, "diff", "--cached", "--name-only"), "the merge applies to the working tree only")
	e.waitIdle(parent)

	gitIn(t, e.oc.Dir, "-c", "user.name=u", "-c", "user.email=u@example.invalid", "commit", "-q", "-m", "A", "shared.txt")
	merged := treeBytes(t, e.oc.Dir)
	index, err := os.ReadFile(filepath.Join(e.oc.Dir, ".git", "index"))
	require.NoError(t, err)
	e.promptIn(parent, "MERGE "+ids[1])
	e.eventually("the second merge", 60*time.Second, func() bool { return len(e.toolResults(parent, "asyncagents_merge")) == 2 })
	second := e.toolResults(parent, "asyncagents_merge")[1]
	require.Contains(t, second, "conflict", second)
	require.Contains(t, second, "shared.txt", second)
	require.Equal(t, merged, treeBytes(t, e.oc.Dir), "a conflict leaves the tree byte for byte as it was")
	after, _ := os.ReadFile(filepath.Join(e.oc.Dir, ".git", "index"))
	require.Equal(t, index, after, "and the index")
	require.Contains(t, ourBranches(t, e.oc.Dir), "asyncagents/"+ids[1], "the conflicting task's branch is kept")
}

// A child that changed nothing leaves no worktree and no branch, and its notice says so.
func TestIsolatedChildWithoutChangesLeavesNothing(t *testing.T) {
	e := startIsolated(t, isolationScript(map[string][]mockmodel.ToolCall{"LAUNCH IDLE": {isolatedCall("Idle", "CHILD idle")}}))
	parent := e.prompt("LAUNCH IDLE")
	id := e.launchedTasks(parent, 1)[0]
	e.eventually("the notice", 90*time.Second, func() bool { return e.noticeOf(parent, id) != "" })
	require.Contains(t, e.noticeOf(parent, id), "no changes")
	e.eventually("the worktree's removal", 30*time.Second, func() bool {
		return len(linkedWorktrees(t, e.oc.Dir)) == 0 && len(ourBranches(t, e.oc.Dir)) == 0 && len(worktreeFolders(e.oc)) == 0
	})
}

// The starting point: the child sees the parent's uncommitted edit, and the user's index (a
// staged change) and stash are as they were.
func TestIsolatedChildStartsFromTheParentsTree(t *testing.T) {
	e := startIsolated(t, isolationScript(map[string][]mockmodel.ToolCall{"LAUNCH LOOK": {isolatedCall("Look", "CHILD look")}}))
	require.NoError(t, os.WriteFile(filepath.Join(e.oc.Dir, "other.txt"), []byte("stashed\n"), 0o644))
	gitIn(t, e.oc.Dir, "-c", "user.name=u", "-c", "user.email=u@example.invalid", "stash", "push", "-q", "other.txt")
	require.NoError(t, os.WriteFile(filepath.Join(e.oc.Dir, "other.txt"), []byte("staged\n"), 0o644))
	gitIn(t, e.oc.Dir, "add", "other.txt")
	index := readFile(t, filepath.Join(e.oc.Dir, ".git", "index"))
	stash := gitIn(t, e.oc.Dir, "stash", "list", "--format=%H")
	branches := gitIn(t, e.oc.Dir, "for-each-ref", "refs/heads/main")

	parent := e.prompt("LAUNCH LOOK")
	task := e.launchedTasks(parent, 1)[0]
	child := e.sessionOf(task)
	e.eventually("the child's look", 90*time.Second, func() bool { return finishedParts(e.toolParts(child, "bash")) })
	out := e.toolParts(child, "bash")[0].State.Output
	require.Contains(t, out, strings.TrimSpace(parentEdit), "the child sees the parent's uncommitted edit")
	where := strings.SplitN(out, "\n", 2)[0]
	require.Equal(t, filepath.Join(storageOf(e.oc).Dir, "worktrees"), filepath.Dir(filepath.Dir(where)), "the child's shell runs in its worktree")
	require.Equal(t, task, filepath.Base(where))
	e.eventually("the notice", 60*time.Second, func() bool { return e.noticeOf(parent, task) != "" })
	require.Equal(t, index, readFile(t, filepath.Join(e.oc.Dir, ".git", "index")), "the user's index is unchanged, byte for byte")
	require.Equal(t, stash, gitIn(t, e.oc.Dir, "stash", "list", "--format=%H"))
	require.Equal(t, branches, gitIn(t, e.oc.Dir, "for-each-ref", "refs/heads/main"))
	require.Equal(t, "staged\n", readFile(t, filepath.Join(e.oc.Dir, "other.txt")))
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}
