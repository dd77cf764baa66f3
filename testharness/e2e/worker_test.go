package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
)

// remoteCall is a launch placed with the tool's worker argument ("auto", "local" or a name).
func remoteCall(desc, prompt, worker string) mockmodel.ToolCall {
	c := taskCall(desc, prompt, "general")
	c.Args["worker"] = worker
	return c
}

// heldChildren answers every "CHILD <name>" child with "result <name>", but only once n children
// have asked (bounded): all of them run at once while the tasks are placed.
func heldChildren(t *testing.T, n int, parent mockmodel.Script) mockmodel.Script {
	all := newGate(t)
	var mu sync.Mutex
	asked := 0
	return func(req mockmodel.Request) mockmodel.Reply {
		name, ok := strings.CutPrefix(firstUser(req), "CHILD ")
		if !ok {
			return parent(req)
		}
		mu.Lock()
		if asked++; asked == n {
			all.open()
		}
		mu.Unlock()
		all.wait(90 * time.Second)
		return mockmodel.Reply{Text: "result " + name}
	}
}

// launchScript launches calls on the prompt launch and answers everything else with a word.
func launchScript(launch string, calls []mockmodel.ToolCall) mockmodel.Script {
	return func(req mockmodel.Request) mockmodel.Reply {
		if req.LastUser == launch && lastRole(req) == "user" {
			return mockmodel.Reply{ToolCalls: calls}
		}
		return mockmodel.Reply{Text: "waiting"}
	}
}

// Placement: a fan-out of 6 with "auto", the local machine taking 2 at once and each worker 2,
// spreads 2 children on each place (each child's session is on that server, looked up through
// its API); every result comes back once, in its notice, which names the worker (and a remote
// task's logs come from its worker through the status API); and the batch wakes the parent once.
func TestWorkerAutoPlacementSpreadsAFanOut(t *testing.T) {
	var calls []mockmodel.ToolCall
	for i := 1; i <= 6; i++ {
		calls = append(calls, remoteCall(fmt.Sprintf("Part %d", i), fmt.Sprintf("CHILD %d", i), "auto"))
	}
	f := startFleet(t, heldChildren(t, 6, launchScript("FANOUT", calls)), fleetOptions{
		workers: 2, config: map[string]any{"maxConcurrentStarts": 2}, worker: map[string]any{"maxTasks": 2}})
	f.waitWorkersUp()
	parent := f.prompt("FANOUT")
	ids := f.launchedTasks(parent, 6)
	f.eventually("six notices", 120*time.Second, func() bool { return len(f.notices(parent)) >= 6 })
	f.waitIdle(parent)

	placed, places := map[string]int{}, map[string]string{}
	for _, id := range ids {
		places[id] = f.placeOf(id)
		placed[places[id]]++
	}
	t.Logf("placed: %v", places)
	require.Equal(t, map[string]int{"local": 2, "w1": 2, "w2": 2}, placed, "where the six children ran")
	for _, id := range ids {
		task, _ := findStoredTask(f.oc, id)
		require.Equal(t, "completed", string(task.Status), id)
		require.Equal(t, 1, f.noticesOf(parent, id), "one notice for %s", id)
		n := f.noticeOf(parent, id)
		require.Contains(t, n, "<task_result>\n"+task.Result+"\n</task_result>")
		require.Regexp(t, `^result [1-6]$`, task.Result)
		if places[id] == "local" {
			require.NotContains(t, n, "on worker", "a local task's notice names no worker")
			continue
		}
		require.Contains(t, n, "on worker "+places[id], "the notice names the worker")
		sj := f.api()
		code, logs := apiGet(t, sj.URL+"/v1/tasks/"+id+"/logs", sj.Token, "")
		require.Equal(t, 200, code, logs)
		require.Contains(t, logs, task.Result, "a remote task's logs are read on its worker")
	}
	require.Len(t, f.notices(parent), 6, "every result comes back once")
	// The launch turn, the turn that reads the launch answers, and one turn for the whole batch.
	require.Equal(t, 3, parentTurns(f.model, "FANOUT"), "parent model turns")
}

// Changes: an isolated task on a worker works in a worktree there; its edit comes back as the
// branch asyncagents/<id> in the parent's repository (the parent's tree untouched), the worker's
// worktree is removed, and asyncagents_merge applies the branch to the parent's tree.
func TestWorkerIsolatedBranchArrivesAndMerges(t *testing.T) {
	call := isolatedCall("Edit R", "CHILD edit R")
	call.Args["worker"] = "w1"
	f := startFleet(t, isolationScript(map[string][]mockmodel.ToolCall{"LAUNCH REMOTE": {call}}), fleetOptions{workers: 1})
	f.waitWorkersUp()
	before := treeBytes(t, f.oc.Dir)
	parent := f.prompt("LAUNCH REMOTE")
	id := f.launchedTasks(parent, 1)[0]
	f.eventually("the notice", 120*time.Second, func() bool { return f.noticeOf(parent, id) != "" })
	task, _ := findStoredTask(f.oc, id)
	require.Equal(t, "completed", string(task.Status), f.noticeOf(parent, id))
	require.Equal(t, "w1", f.placeOf(id), "the child ran on the worker")
	n := f.noticeOf(parent, id)
	require.Contains(t, n, "asyncagents/"+id)
	require.Contains(t, n, "on worker w1")

	branch := "asyncagents/" + id
	gitIn(t, f.oc.Dir, "rev-parse", "--verify", branch)
	require.Equal(t, "line one\nedited by R\nline three", gitIn(t, f.oc.Dir, "show", branch+":shared.txt"))
	diff := gitIn(t, f.oc.Dir, "diff", branch+"^", branch)
	require.Contains(t, diff, "+edited by R", diff)
	require.Contains(t, diff, "-line two", diff)
	require.Equal(t, gitIn(t, f.oc.Dir, "rev-parse", "HEAD"), gitIn(t, f.oc.Dir, "rev-parse", branch+"^"), "the branch starts from the parent's HEAD")
	require.Equal(t, before, treeBytes(t, f.oc.Dir), "the child's edit never reached the parent's tree")
	w := f.workers["w1"]
	f.eventually("the worker's worktree removed", 30*time.Second, func() bool {
		return strings.Count(gitIn(t, w.Dir, "worktree", "list", "--porcelain"), "worktree ") == 1
	})
	f.waitIdle(parent)

	f.promptIn(parent, "MERGE "+id)
	f.eventually("the merge", 60*time.Second, func() bool { return len(f.toolResults(parent, "asyncagents_merge")) == 1 })
	merged := f.toolResults(parent, "asyncagents_merge")[0]
	require.NotContains(t, merged, "ERROR", merged)
	got, err := os.ReadFile(filepath.Join(f.oc.Dir, "shared.txt"))
	require.NoError(t, err)
	require.Equal(t, "line one\nedited by R\nline three\n", string(got))
}
