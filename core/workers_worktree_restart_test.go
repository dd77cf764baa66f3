package core

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// Task IDs as the core mints them, and the folders OpenCode names for them on w1.
const (
	stopID   = "bg_0193a1b2c3d4e5f6a7b8c9"
	stopDir  = "/srv/w1/data/worktree/p1/bg-0193a1b2c3d4e5f6a7b8c9"
	otherID  = "bg_0193a1b2c3d5aaaaaaaaaa"
	otherDir = "/srv/w1/data/worktree/p1/bg-0193a1b2c3d5aaaaaaaaaa"
)

// remoteIsolated is a task of the history that ran on w1 in a worktree, ended with status st.
func remoteIsolated(id string, st task.Status, w task.Worktree) task.Task {
	w.Branch = "asyncagents/" + id
	return task.Task{ID: id, SessionID: "ses_" + id, ParentSessionID: "ses_p", ParentMessageID: "msg_p", BatchID: "msg_p", Description: "Edit " + id,
		Prompt: "p", Agent: "general", Worker: "w1", Status: st, Result: "edited", StartedAt: 900_000, CompletedAt: 950_000, Depth: 1,
		Progress: task.Progress{LastTools: []string{}, LastUpdate: 950_000}, Worktree: &w}
}

// restoreAndList restores hist, brings w1 up and answers its worktree list with dirs; it returns
// the effects of that answer.
func restoreAndList(h *wkHarness, hist string, dirs ...string) []Effect {
	h.t.Helper()
	_, eff := h.m.Restore(h.now, hist)
	require.Empty(h.t, ofKind(eff, EffectWorkerWorktreeList), "listed once the worker is up")
	h.run(Event{Type: EventStart})
	list := ofKind(h.state("w1", true, ""), EffectWorkerWorktreeList)
	require.Len(h.t, list, 1, "w1's worktrees are listed after the restore")
	require.Equal(h.t, "/srv/w1/repo", list[0].Directory)
	raw, _ := json.Marshal(map[string]any{"directories": dirs})
	return h.run(Event{Type: EventEffectDone, EffectID: list[0].ID, OK: true, Result: raw})
}

// removedOn lists the worktree paths the effects remove on a worker.
func removedOn(eff []Effect) []string {
	var out []string
	for _, e := range ofKind(eff, EffectWorkerWorktreeRemove) {
		out = append(out, e.Path)
	}
	return out
}

// A stop after the child's end was recorded and before its patch came home: after the restart the
// patch comes home from the worktree the history names, becomes the branch, the worktree is
// removed and the parent told of the branch; a second worktree named for the task (a making the
// stop cut short, made again) is removed, and folders not named for a task of the history stay.
func TestRestartBringsHomeThePatchAStopLeftOnAWorker(t *testing.T) {
	h := newWKProject(t)
	hist := HistoryLine(remoteIsolated(stopID, task.StatusCompleted, task.Worktree{WorkerPath: stopDir}))
	leftover := stopDir + "-brave-otter"
	eff := restoreAndList(h, hist, "/srv/w1/data/worktree/p1/feature", stopDir, leftover,
		"/srv/w1/data/worktree/p1/bg-ffffffffffffffffffffff", stopDir+"-not-ours-at-all")
	require.Equal(t, []string{leftover}, removedOn(eff), "only the leftover named for the ended task goes at once")
	diff, eff := h.answerOne(eff, EffectWorkerWorktreeDiff, `{"patch":"diff --git a/x.go b/x.go\n"}`, "")
	require.Equal(t, stopDir, diff.Directory)
	require.Equal(t, "w1", diff.Worker)
	imp, eff := h.answerOne(eff, EffectWorktreeImport, `{"base":"h0","commit":"c1","files":[{"path":"x.go","added":1,"removed":0}]}`, "")
	require.Equal(t, "asyncagents/"+stopID, imp.Branch)
	require.Equal(t, []string{stopDir}, removedOn(eff), "the worktree goes once its patch is home")
	tk := h.m.task(stopID)
	require.Equal(t, task.MergePending, tk.Worktree.Merge)
	require.Equal(t, "c1", tk.Worktree.Commit)
	require.Empty(t, tk.Worktree.WorkerPath)
	h.from("", "session.idle", `{"sessionID":"ses_p"}`)
	notices := ""
	for _, p := range ofKind(h.effects, EffectPromptAsync) {
		if p.Notice {
			notices += p.Parts[0].Text
		}
	}
	require.Contains(t, notices, "branch: asyncagents/"+stopID, "the parent is told, once the branch is there")
}

// A stop after the import (or after a cancel while the worktree was made) leaves a worktree the
// history no longer names: it is removed, as is a second one named for a task at work in its own.
// A task still at work keeps its own, and one whose patch did not apply keeps it.
func TestRestartRemovesWorktreesItsTasksNoLongerNeed(t *testing.T) {
	h := newWKProject(t)
	imported := remoteIsolated(stopID, task.StatusCompleted, task.Worktree{Base: "h0", Commit: "c1", Merge: task.MergePending})
	kept := remoteIsolated(otherID, task.StatusCompleted, task.Worktree{WorkerPath: otherDir, Merge: task.MergeNone, MergeNote: "did not apply"})
	const runID, runDir = "bg_0193a1b2c3d6bbbbbbbbbb", "/srv/w1/data/worktree/p1/bg-0193a1b2c3d6bbbbbbbbbb"
	running := remoteIsolated(runID, task.StatusRunning, task.Worktree{WorkerPath: runDir})
	running.CompletedAt, running.Result = 0, ""
	hist := HistoryLine(imported) + HistoryLine(kept) + HistoryLine(running)
	eff := restoreAndList(h, hist, stopDir, otherDir, runDir, runDir+"-calm-river")
	require.Equal(t, []string{stopDir, runDir + "-calm-river"}, removedOn(eff))
	require.Empty(t, ofKind(eff, EffectWorkerWorktreeDiff), "no patch is asked again")
	for _, e := range ofKind(eff, EffectWorkerWorktreeRemove) {
		require.Equal(t, "w1", e.Worker)
		require.Equal(t, "/srv/w1/repo", e.Directory)
	}
}

// A list that fails is logged and asked again when the worker next comes up; a process that
// restored no task, and a second up, list nothing.
func TestWorkerWorktreeListRetriedAtTheNextUp(t *testing.T) {
	h := newWKProject(t)
	_, _ = h.m.Restore(h.now, HistoryLine(remoteIsolated(stopID, task.StatusCompleted, task.Worktree{WorkerPath: stopDir})))
	list := ofKind(h.state("w1", true, ""), EffectWorkerWorktreeList)
	require.Len(t, list, 1)
	eff := h.run(Event{Type: EventEffectDone, EffectID: list[0].ID, Error: "worker w1: listing the worktrees: connection refused"})
	logs := ofKind(eff, EffectLog)
	require.Len(t, logs, 1)
	require.True(t, strings.HasPrefix(logs[0].Message, "could not list the worktrees on worker w1"), logs[0].Message)
	h.state("w1", false, "gone")
	list = ofKind(h.state("w1", true, ""), EffectWorkerWorktreeList)
	require.Len(t, list, 1, "asked again")
	h.run(Event{Type: EventEffectDone, EffectID: list[0].ID, OK: true, Result: json.RawMessage(`{"directories":[]}`)})
	h.state("w1", false, "gone")
	require.Empty(t, ofKind(h.state("w1", true, ""), EffectWorkerWorktreeList), "once listed, not again")

	fresh := newWKProject(t)
	_, _ = fresh.m.Restore(fresh.now, "")
	require.Empty(t, ofKind(fresh.state("w1", true, ""), EffectWorkerWorktreeList), "no task restored, nothing to look for")
}

// Only OpenCode's slug of a task ID names a task's worktree, with or without its random words.
func TestWorktreeTaskID(t *testing.T) {
	for base, want := range map[string]string{
		"bg-0193a1b2c3d4e5f6a7b8c9":             stopID,
		"bg-0193a1b2c3d4e5f6a7b8c9-brave-otter": stopID,
		"bg-0193a1b2c3d4e5f6a7b8c9-brave":       "",
		"bg-0193a1b2c3d4e5f6a7b8c9-a-b-c":       "",
		"feature":                               "",
		"bg-":                                   "",
		"bg_0193a1b2c3d4e5f6a7b8c9":             "",
	} {
		require.Equal(t, want, worktreeTaskID(base), base)
	}
	require.Equal(t, "bg-0193a1b2c3d4e5f6a7b8c9", slugOf(stopID))
}

// A stop while a task's worktree was being made on its worker: the restored task waits for the
// worker's list, what that making left (named for the task) is removed, and then its worktree is
// made again; a list that fails does not keep it waiting.
func TestRestoredWhileMadeOnAWorkerWaitsForTheList(t *testing.T) {
	for _, fails := range []bool{false, true} {
		h := newWKProject(t)
		making := remoteIsolated(stopID, task.StatusRunning, task.Worktree{})
		making.CompletedAt, making.Result, making.SessionID = 0, "", ""
		_, eff := h.m.Restore(h.now, HistoryLine(making))
		require.Empty(t, ofKind(eff, EffectWorkerWorktreeCreate), "not made before the list")
		h.run(Event{Type: EventStart})
		eff = h.state("w1", true, "")
		require.Empty(t, ofKind(eff, EffectWorkerWorktreeCreate), "not made before the list")
		list := ofKind(eff, EffectWorkerWorktreeList)
		require.Len(t, list, 1)
		done := Event{Type: EventEffectDone, EffectID: list[0].ID, OK: true, Result: json.RawMessage(`{"directories":["` + stopDir + `"]}`)}
		if fails {
			done = Event{Type: EventEffectDone, EffectID: list[0].ID, Error: "worker w1: listing the worktrees: Not Found (404)"}
		}
		eff = h.run(done)
		if fails {
			require.Empty(t, removedOn(eff))
		} else {
			require.Equal(t, []string{stopDir}, removedOn(eff), "what the making left goes")
		}
		mk := ofKind(eff, EffectWorkerWorktreeCreate)
		require.Len(t, mk, 1, "then the worktree is made again")
		require.Equal(t, stopID, mk[0].TaskID)
	}
}

// A stop while the task ran: the restarted parent reconciles it on its worker, in its worktree,
// and ends it (here as interrupted: its child is no longer busy and its answer is incomplete);
// its changes come home all the same, then its worktree goes.
func TestRestartEndsARemoteTaskAndBringsItsPatchHome(t *testing.T) {
	h := newWKProject(t)
	running := remoteIsolated(stopID, task.StatusRunning, task.Worktree{WorkerPath: stopDir})
	running.CompletedAt, running.Result = 0, ""
	eff := restoreAndList(h, HistoryLine(running), stopDir)
	require.Empty(t, removedOn(eff), "its own worktree, at work")
	st := ofKind(h.effects, EffectStatus)
	require.NotEmpty(t, st)
	require.Equal(t, stopDir, st[len(st)-1].Directory, "reconciled in its worktree on the worker")
	eff = h.run(Event{Type: EventEffectDone, EffectID: st[len(st)-1].ID, OK: true, Result: json.RawMessage(`{}`)})
	rd := ofKind(eff, EffectMessages)
	require.Len(t, rd, 1)
	eff = h.run(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true, Result: json.RawMessage(`[{"info":{"id":"u1","role":"user","time":{"created":900001}},"parts":[]},{"info":{"id":"a1","role":"assistant","time":{"created":900002}},"parts":[{"type":"text","text":"half"}]}]`)})
	require.Equal(t, task.StatusError, h.m.task(stopID).Status)
	diff, eff := h.answerOne(eff, EffectWorkerWorktreeDiff, `{"patch":"diff --git a/x.go b/x.go\n"}`, "")
	require.Equal(t, stopDir, diff.Directory)
	_, eff = h.answerOne(eff, EffectWorktreeImport, `{"base":"h0","commit":"c1","files":[{"path":"x.go","added":1,"removed":0}]}`, "")
	require.Equal(t, []string{stopDir}, removedOn(eff))
}
