package core

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// newWKProject is newWK in a git project, for isolated tasks.
func newWKProject(t *testing.T) *wkHarness {
	h := newWK(t, twoWorkers(nil))
	h.m = NewMachineWith(twoWorkers(nil), Setup{Project: wtProject, Worktrees: wtFolder})
	return h
}

// answerOne answers the one effect of kind among eff with result (or fails it with errText).
func (h *wkHarness) answerOne(eff []Effect, kind, result, errText string) (Effect, []Effect) {
	got := ofKind(eff, kind)
	require.Len(h.t, got, 1, "one %s", kind)
	return got[0], h.run(Event{Type: EventEffectDone, EffectID: got[0].ID, OK: errText == "", Error: errText, Result: json.RawMessage(result)})
}

// An isolated task on a worker works in a worktree made there; at its end its patch comes home
// as a commit on its branch, the worktree there is removed, and asyncagents_merge merges it with
// nothing local to remove.
func TestRemoteIsolatedTask(t *testing.T) {
	h := newWKProject(t)
	h.state("w1", true, "")
	_, eff := h.launchArgs("iso", `,"worker":"w1","isolation":"worktree"`)
	require.Empty(t, ofKind(eff, EffectWorktreeCreate), "no local worktree")
	require.Empty(t, ofKind(eff, EffectSessionCreate), "the session waits for the worktree")
	tk := h.m.task(h.m.order[0])
	require.Equal(t, task.Status("preparing"), tk.Shown())
	create, eff := h.answerOne(eff, EffectWorkerWorktreeCreate, `{"directory":"/srv/w1/wt/bg","branch":"opencode/bg"}`, "")
	require.Equal(t, "w1", create.Worker)
	require.Equal(t, "/srv/w1/repo", create.Directory)
	require.Equal(t, tk.ID, create.TaskID)
	sc := ofKind(eff, EffectSessionCreate)
	require.Len(t, sc, 1)
	require.Equal(t, "/srv/w1/wt/bg", sc[0].Directory, "the session works in the worktree on the worker")

	n := len(h.effects)
	h.answerOn("w1", tk.SessionID, "edited")
	eff = h.effects[n:]
	patch := "diff --git a/x.go b/x.go\n--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n-a\n+b\n"
	diff, eff := h.answerOne(eff, EffectWorkerWorktreeDiff, `{"patch":`+jsonString(patch)+`}`, "")
	require.Equal(t, "/srv/w1/wt/bg", diff.Directory)
	imp, eff := h.answerOne(eff, EffectWorktreeImport, `{"base":"head0","commit":"c1","files":[{"path":"x.go","added":1,"removed":1}],"diff":"d"}`, "")
	require.Equal(t, wtProject, imp.Directory)
	require.Equal(t, "asyncagents/"+tk.ID, imp.Branch)
	require.Equal(t, patch, imp.Content)
	require.Empty(t, imp.Worker, "the import is local")
	rm := ofKind(eff, EffectWorkerWorktreeRemove)
	require.Len(t, rm, 1)
	require.Equal(t, "/srv/w1/repo", rm[0].Directory)
	require.Equal(t, "/srv/w1/wt/bg", rm[0].Path)
	w := tk.Worktree
	require.Equal(t, task.Worktree{Branch: "asyncagents/" + tk.ID, Base: "head0", Commit: "c1", Files: []task.FileChange{{Path: "x.go", Added: 1, Removed: 1}}, Diff: "d", Merge: task.MergePending}, *w)
	h.from("", "session.idle", `{"sessionID":"ses_p"}`)
	notices := ""
	for _, p := range ofKind(h.effects, EffectPromptAsync) {
		if p.Notice {
			notices += p.Parts[0].Text
		}
	}
	require.Contains(t, notices, "branch: asyncagents/"+tk.ID)

	eff = h.run(Event{Type: EventToolCall, CallID: "call_m", Tool: ToolMerge, SessionID: "ses_p", Args: json.RawMessage(`{"task_id":"` + tk.ID + `"}`)})
	_, eff = h.answerOne(eff, EffectWorktreeInspect, `{"dirty":[]}`, "")
	mg, eff := h.answerOne(eff, EffectWorktreeMerge, `{"applied":["x.go"]}`, "")
	require.Equal(t, "c1", mg.Commit)
	require.Empty(t, ofKind(eff, EffectWorktreeRemove), "nothing local to remove")
	require.Equal(t, task.MergeMerged, tk.Worktree.Merge)
	require.Contains(t, ofKind(eff, EffectToolReply)[0].Output, "Merged task "+tk.ID)
}

// A patch that does not apply keeps the worktree on the worker, and the notice says so with the
// patch's files.
func TestRemotePatchThatDoesNotApply(t *testing.T) {
	h := newWKProject(t)
	h.state("w1", true, "")
	_, eff := h.launchArgs("iso", `,"worker":"w1","isolation":"worktree"`)
	_, _ = h.answerOne(eff, EffectWorkerWorktreeCreate, `{"directory":"/srv/w1/wt/bg"}`, "")
	tk := h.m.task(h.m.order[0])
	n := len(h.effects)
	h.answerOn("w1", tk.SessionID, "edited")
	eff = h.effects[n:]
	_, eff = h.answerOne(eff, EffectWorkerWorktreeDiff, `{"patch":"diff --git a/y.txt b/y.txt\n"}`, "")
	_, eff = h.answerOne(eff, EffectWorktreeImport, ``, "error: patch failed: y.txt:1")
	require.Empty(t, ofKind(eff, EffectWorkerWorktreeRemove), "the worktree stays on the worker")
	lines := strings.Join(h.m.worktreeLines(tk), "\n")
	require.Contains(t, lines, "did not apply to your HEAD (its worktree is kept on worker w1 at /srv/w1/wt/bg): error: patch failed: y.txt:1")
	require.Contains(t, lines, "  y.txt")
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }

// Discarding a remote task's changes removes its local branch only: it has no local folder.
func TestRemoteIsolatedDiscard(t *testing.T) {
	h := newWKProject(t)
	h.state("w1", true, "")
	_, eff := h.launchArgs("iso", `,"worker":"w1","isolation":"worktree"`)
	_, _ = h.answerOne(eff, EffectWorkerWorktreeCreate, `{"directory":"/srv/w1/wt/bg"}`, "")
	tk := h.m.task(h.m.order[0])
	n := len(h.effects)
	h.answerOn("w1", tk.SessionID, "edited")
	_, eff = h.answerOne(h.effects[n:], EffectWorkerWorktreeDiff, `{"patch":"diff --git a/x.go b/x.go\n"}`, "")
	_, _ = h.answerOne(eff, EffectWorktreeImport, `{"base":"h","commit":"c1","files":[{"path":"x.go","added":1,"removed":0}]}`, "")
	eff = h.run(Event{Type: EventToolCall, CallID: "call_d", Tool: ToolMerge, SessionID: "ses_p", Args: json.RawMessage(`{"task_id":"` + tk.ID + `","discard":true}`)})
	rm, eff := h.answerOne(eff, EffectWorktreeRemove, `{}`, "")
	require.Empty(t, rm.Path, "no local folder")
	require.Equal(t, "asyncagents/"+tk.ID, rm.Branch)
	require.Equal(t, task.MergeDiscarded, tk.Worktree.Merge)
	require.Contains(t, ofKind(eff, EffectToolReply)[0].Output, "Discarded task "+tk.ID)
}
