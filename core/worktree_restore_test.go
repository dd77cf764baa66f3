package core

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/history"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// At start the machine lists the project's worktrees: it removes those no task of the history
// needs that hold nothing (a crash during creation, a task forgotten), keeps those of tasks whose
// branches wait for a merge, and names those that hold changes no task claims.
func TestStartReconcilesWorktrees(t *testing.T) {
	pending := task.Task{ID: "bg_pending", SessionID: "ses_1", ParentSessionID: "ses_p", Description: "d", Agent: "general", Status: task.StatusCompleted, StartedAt: 1, CompletedAt: 2,
		Worktree: &task.Worktree{Path: wtFolder + "/bg_pending", Branch: "asyncagents/bg_pending", Base: "s", Commit: "c", Merge: task.MergePending, Files: []task.FileChange{{Path: "a.go", Added: 1}}}}
	merged := pending
	merged.ID, merged.Worktree = "bg_merged", &task.Worktree{Path: wtFolder + "/bg_merged", Branch: "asyncagents/bg_merged", Base: "s", Merge: task.MergeMerged}
	hist := history.Line(history.Record{Task: &pending}) + history.Line(history.Record{Task: &merged})
	m := NewMachineWith(config.Config{}, Setup{Project: wtProject, Worktrees: wtFolder})
	_, eff := m.Restore(1000, hist)
	list := ofKind(eff, EffectWorktreeList)
	require.Len(t, list, 1)
	require.Equal(t, wtProject, list[0].Directory)
	require.Equal(t, wtFolder, list[0].Path)
	found := []map[string]any{
		{"path": wtFolder + "/bg_pending", "branch": "asyncagents/bg_pending", "changed": true},
		{"path": wtFolder + "/bg_merged", "branch": "asyncagents/bg_merged", "changed": false},
		{"path": wtFolder + "/bg_crash", "branch": "asyncagents/bg_crash", "changed": false},
		{"path": wtFolder + "/bg_gone", "branch": "asyncagents/bg_gone", "changed": true},
	}
	raw, _ := json.Marshal(map[string]any{"worktrees": found})
	eff = m.Step(1001, Event{Type: EventEffectDone, EffectID: list[0].ID, OK: true, Result: raw})
	var removed []string
	for _, e := range ofKind(eff, EffectWorktreeRemove) {
		removed = append(removed, e.Branch)
	}
	require.Equal(t, []string{"asyncagents/bg_merged", "asyncagents/bg_crash"}, removed)
	logs := ofKind(eff, EffectLog)
	require.Len(t, logs, 1)
	require.Contains(t, logs[0].Message, wtFolder+"/bg_gone (asyncagents/bg_gone)")

	// Without a project (a host that passed no env), nothing is listed.
	_, eff = NewMachine(config.Config{}).Restore(1000, hist)
	require.Empty(t, ofKind(eff, EffectWorktreeList))
}

// A resume of an isolated task goes on in its worktree and commits anew at its end; a task whose
// worktree is gone cannot be resumed there.
func TestResumeGoesOnInTheWorktree(t *testing.T) {
	h := newWT(t, config.Config{})
	id, _, _ := h.launchIso("r", `,"isolation":"worktree"`)
	h.files[id] = `[{"path":"a.go","added":1,"removed":0}]`
	h.finishTask(id)
	path := wtFolder + "/" + id
	eff := h.run(Event{Type: EventToolCall, CallID: "res", Tool: ToolTask, SessionID: "ses_p", Args: []byte(fmt.Sprintf(`{"resume":%q,"prompt":"more"}`, id))})
	get := ofKind(eff, EffectSessionGet)
	require.Len(t, get, 1)
	require.Equal(t, path, get[0].Directory)
	eff = h.run(Event{Type: EventEffectDone, EffectID: get[0].ID, OK: true, Result: []byte(`{"id":"` + h.m.task(id).SessionID + `"}`)})
	require.Equal(t, path, prompts(eff, h.m.task(id).SessionID)[0].Directory)
	require.Empty(t, h.m.task(id).Worktree.Merge, "at work again")
	h.files[id] = `[{"path":"a.go","added":4,"removed":0}]`
	h.finishTask(id)
	require.Len(t, h.doneOfKind(EffectWorktreeCommit), 2)
	require.Equal(t, 4, h.m.task(id).Worktree.Files[0].Added)

	require.Empty(t, h.merge(fmt.Sprintf(`{"task_id":%q,"discard":true}`, id)).Error)
	eff = h.run(Event{Type: EventToolCall, CallID: "res2", Tool: ToolTask, SessionID: "ses_p", Args: []byte(fmt.Sprintf(`{"resume":%q,"prompt":"more"}`, id))})
	require.Contains(t, ofKind(eff, EffectToolReply)[0].Error, "worktree is removed (its changes: discarded)")
}

// `asyncagents ls` shows the branch and the merge state, and only when a task has a branch.
func TestLsShowsBranchAndMerge(t *testing.T) {
	plain := task.Task{ID: "bg_plain", Status: task.StatusCompleted, Agent: "general", Description: "p", StartedAt: 1, CompletedAt: 2}
	require.NotContains(t, TasksTable([]task.Task{plain}, 3), "BRANCH")
	pending := plain
	pending.ID, pending.Worktree = "bg_iso", &task.Worktree{Branch: "asyncagents/bg_iso", Base: "s", Merge: task.MergePending}
	preparing := task.Task{ID: "bg_prep", Status: task.StatusRunning, Agent: "general", Description: "q", StartedAt: 1, Worktree: &task.Worktree{Branch: "asyncagents/bg_prep"}}
	out := TasksTable([]task.Task{plain, pending, preparing}, 3)
	require.Contains(t, out, "BRANCH")
	require.Regexp(t, `bg_iso .*asyncagents/bg_iso\s+pending`, out)
	require.Regexp(t, `bg_prep .*preparing .*asyncagents/bg_prep\s+at work`, out)
	require.Regexp(t, `bg_plain .*-\s+-\n`, out)
}

// A task cancelled while its worktree is being created gets no session, and its worktree and
// branch are removed once they exist.
func TestCancelWhilePreparing(t *testing.T) {
	h := newWT(t, config.Config{})
	h.hold[EffectWorktreeCreate] = true
	id, _, _ := h.launchIso("c", `,"isolation":"worktree"`)
	eff := h.run(Event{Type: EventToolCall, CallID: "cancel", Tool: ToolCancel, SessionID: "ses_p", Args: []byte(fmt.Sprintf(`{"task_id":%q}`, id))})
	require.Empty(t, ofKind(eff, EffectToolReply)[0].Error)
	require.Equal(t, task.StatusCancelled, h.m.task(id).Status)
	delete(h.hold, EffectWorktreeCreate)
	eff = h.release()
	require.Empty(t, ofKind(eff, EffectSessionCreate), "no session for a cancelled task")
	rm := h.doneOfKind(EffectWorktreeRemove)
	require.Len(t, rm, 1)
	require.Equal(t, "asyncagents/"+id, rm[0].Branch)
	require.Equal(t, task.MergeNone, h.m.task(id).Worktree.Merge)
	require.NotContains(t, h.merge(fmt.Sprintf(`{"task_id":%q}`, id)).Error, "still")
}

// The history holds a preparing task, with its folder and branch, before the host is asked to
// make them.
func TestHistoryHoldsPreparingTaskBeforeCreate(t *testing.T) {
	h := newWT(t, config.Config{})
	h.hold[EffectWorktreeCreate] = true
	id, _, eff := h.launchIso("h", `,"isolation":"worktree"`)
	at := func(kind string, cond func(Effect) bool) int {
		for i, e := range eff {
			if e.Kind == kind && cond(e) {
				return i
			}
		}
		return -1
	}
	line := at(EffectHistoryAppend, func(e Effect) bool {
		return strings.Contains(e.Line, `"status":"preparing"`) && strings.Contains(e.Line, `"branch":"asyncagents/`+id+`"`)
	})
	create := at(EffectWorktreeCreate, func(Effect) bool { return true })
	require.GreaterOrEqual(t, line, 0, "the history line of the preparing task")
	require.Greater(t, create, line)
}

// A forked isolated task gets its own worktree; the parent's conversation it forks is read from
// the parent's own directory.
func TestForkGetsItsOwnWorktree(t *testing.T) {
	h := newWT(t, config.Config{})
	a, _, _ := h.launchIso("a", `,"isolation":"worktree"`)
	f, _, eff := h.launchIso("f", `,"isolation":"worktree","fork":true`)
	require.NotEqual(t, h.m.task(a).Worktree.Path, h.m.task(f).Worktree.Path)
	require.Equal(t, "asyncagents/"+f, h.m.task(f).Worktree.Branch)
	read := ofKind(eff, EffectMessages)
	require.Len(t, read, 1)
	require.Equal(t, "ses_p", read[0].SessionID)
	require.Empty(t, read[0].Directory)
	require.Equal(t, wtFolder+"/"+f, ofKind(eff, EffectSessionCreate)[0].Directory)
}

// A task restored while preparing (the process died during the creation) has what was left of
// its worktree removed, then the worktree made again, and runs.
func TestRestoredPreparingTaskIsMadeAgain(t *testing.T) {
	prep := task.Task{ID: "bg_prep", ParentSessionID: "ses_p", Description: "d", Prompt: "p", Agent: "general", Status: task.StatusRunning, StartedAt: 1, Depth: 1,
		Worktree: &task.Worktree{Path: wtFolder + "/bg_prep", Branch: "asyncagents/bg_prep"}}
	h := newWT(t, config.Config{})
	_, eff := h.m.Restore(h.now, history.Line(history.Record{Task: &prep}))
	require.Equal(t, task.StatusPreparing, h.m.task("bg_prep").Shown())
	rm := ofKind(eff, EffectWorktreeRemove)
	require.Len(t, rm, 1)
	require.Equal(t, "asyncagents/bg_prep", rm[0].Branch)
	require.Empty(t, ofKind(eff, EffectWorktreeCreate), "made again only once the leftover is gone")
	h.found = `[]`
	for _, e := range ofKind(eff, EffectWorktreeList) {
		h.answerWT(e)
	}
	eff = h.answerWT(rm[0])
	require.Len(t, ofKind(h.done, EffectWorktreeCreate), 1)
	// Its parent's children are read in the worktree (no child names it), then its session made.
	look := ofKind(eff, EffectSessionChildren)
	require.Len(t, look, 1)
	require.Equal(t, wtFolder+"/bg_prep", look[0].Directory)
	eff = h.step(Event{Type: EventEffectDone, EffectID: look[0].ID, OK: true, Result: json.RawMessage(`[]`)})
	require.Equal(t, wtFolder+"/bg_prep", ofKind(eff, EffectSessionCreate)[0].Directory)
}
