package core

import (
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/core/worktree"
)

// An isolated task on a worker (docs/rationale/workers.md): its worktree is made in the worker's
// clone through OpenCode's API (worker.worktree.create), and at its end its uncommitted changes
// come home as a patch (worker.worktree.diff) that the local host turns into a commit on the
// task's branch over the parent's HEAD (worktree.import); the worktree on the worker is then
// removed. The task has a Worktree with its branch and commit and no local Path, and
// asyncagents_merge takes it as a local one's.

// isolateRemote gives a new isolated task placed on a worker its branch; its worktree there is
// made by prepareRemoteWorktree.
func (m *Machine) isolateRemote(t *run) {
	t.Worktree = &task.Worktree{Branch: worktree.Branch(t.ID)}
}

// prepareRemoteWorktree asks the worker for t's worktree; true while t waits for it.
func (m *Machine) prepareRemoteWorktree(t *run) bool {
	w := t.Worktree
	if w.WorkerPath != "" || w.Base != "" {
		return false
	}
	if t.unbound && m.sweepPending(t.Worker) {
		return true // restored while it was being made: what that left goes first (onWorkerWorktreesListed)
	}
	if !t.creating {
		t.creating = true
		m.touch(t)
		m.request(Effect{Kind: EffectWorkerWorktreeCreate, Worker: t.Worker, Remote: m.remote(t.Worker),
			Directory: m.cfg.Workers[t.Worker].Directory, TaskID: t.ID}, pending{taskID: t.ID})
	}
	return true
}

// onRemoteWorktreeCreated starts the session in the worker's new worktree, or fails the task.
func (m *Machine) onRemoteWorktreeCreated(p pending, ev Event) {
	t := m.task(p.taskID)
	if t == nil || t.Worktree == nil {
		return
	}
	t.creating = false
	var made struct {
		Directory string `json:"directory"`
	}
	if ev.OK {
		_ = json.Unmarshal(ev.Result, &made)
	}
	switch {
	case !ev.OK && m.remoteDown(t) && !t.Status.Terminal():
		m.log("warn", "task "+t.ID+": no worktree on a worker that is down, made at its return: "+ev.Error)
		return
	case !ev.OK || made.Directory == "":
		t.Worktree.Merge = task.MergeNone
		if !t.Status.Terminal() {
			reason := ev.Error
			if reason == "" {
				reason = "no directory in the answer"
			}
			m.finish(t, task.StatusError, "", &task.TaskError{Name: "WorktreeError", Message: fmt.Sprintf(remoteWorktreeErrorFmt, t.Worker, reason)})
		}
	case t.Status.Terminal(): // cancelled while it was made: nothing of it stays
		t.Worktree.Merge = task.MergeNone
		m.removeRemoteWorktree(t, made.Directory)
	default:
		t.Worktree.WorkerPath = made.Directory
		m.startTask(t)
	}
	m.touch(t)
	m.storeChanged()
}

// importFirst holds t's end notice until its changes on the worker are a commit here: true while
// they come home (onRemoteDiff, onImported then tell the parent).
func (m *Machine) importFirst(t *run) bool {
	w := t.Worktree
	if w == nil || w.WorkerPath == "" || w.Merge != "" || !t.Status.Terminal() {
		return false
	}
	if _, under := m.wt.committing[t.ID]; !under {
		if m.wt.committing == nil {
			m.wt.committing = map[string]string{}
		}
		m.wt.committing[t.ID] = t.ParentSessionID
		m.request(Effect{Kind: EffectWorkerWorktreeDiff, Worker: t.Worker, Remote: m.remote(t.Worker), Directory: w.WorkerPath, TaskID: t.ID}, pending{taskID: t.ID})
	}
	return true
}

// onRemoteDiff imports the patch the worker gave; no patch, or none to read, ends the wait.
func (m *Machine) onRemoteDiff(p pending, ev Event) {
	t := m.task(p.taskID)
	var got struct {
		Patch string `json:"patch"`
	}
	if ev.OK {
		_ = json.Unmarshal(ev.Result, &got)
	}
	switch {
	case t == nil || t.Worktree == nil:
		m.endImport(p.taskID, nil)
	case !ev.OK:
		// The worktree stays on the worker, with the changes in it.
		t.Worktree.Merge = task.MergeNone
		t.Worktree.MergeNote = fmt.Sprintf(remoteDiffFailedFmt, t.Worker, t.Worktree.WorkerPath, ev.Error)
		m.log("warn", "task "+t.ID+": "+t.Worktree.MergeNote)
		m.endImport(p.taskID, t)
	case got.Patch == "":
		t.Worktree.Merge = task.MergeNone
		m.removeRemoteWorktree(t, t.Worktree.WorkerPath)
		m.endImport(p.taskID, t)
	default:
		t.Worktree.Files = patchFiles(got.Patch)
		m.request(Effect{Kind: EffectWorktreeImport, TaskID: t.ID, Directory: m.wt.project, Branch: t.Worktree.Branch, Content: got.Patch,
			Message: t.Description, MaxBytes: maxDiffBytes}, pending{taskID: t.ID})
	}
}

// onImported records the commit the patch became here and removes the worktree on the worker.
// A patch that does not apply keeps the worktree there, names its files, and says so.
func (m *Machine) onImported(p pending, ev Event) {
	t := m.task(p.taskID)
	if t == nil || t.Worktree == nil {
		m.endImport(p.taskID, nil)
		return
	}
	w := t.Worktree
	var got struct {
		Base    string            `json:"base"`
		Commit  string            `json:"commit"`
		Files   []task.FileChange `json:"files"`
		Diff    string            `json:"diff"`
		DiffCut bool              `json:"diffCut"`
	}
	if ev.OK {
		_ = json.Unmarshal(ev.Result, &got)
	}
	switch {
	case !ev.OK:
		w.Merge = task.MergeNone
		w.MergeNote = fmt.Sprintf(importFailedFmt, t.Worker, w.WorkerPath, ev.Error)
		m.log("warn", "task "+t.ID+": "+w.MergeNote)
	case got.Commit == "" || len(got.Files) == 0:
		w.Merge, w.Files = task.MergeNone, nil
		m.removeRemoteWorktree(t, w.WorkerPath)
	default:
		w.Base, w.Commit, w.Files, w.Diff, w.DiffCut = got.Base, got.Commit, got.Files, got.Diff, got.DiffCut
		w.Merge = task.MergePending
		m.removeRemoteWorktree(t, w.WorkerPath)
	}
	m.endImport(p.taskID, t)
}

// endImport sends the end notice that waited for the import.
func (m *Machine) endImport(id string, t *run) {
	parent := m.wt.committing[id]
	delete(m.wt.committing, id)
	defer m.siblingCommitted(parent)
	if t == nil {
		return
	}
	m.touch(t)
	m.storeChanged()
	m.notifyParent(t)
}

// removeRemoteWorktree removes the worktree at path from the worker's clone; its folder on the
// worker is then no longer the task's.
func (m *Machine) removeRemoteWorktree(t *run, path string) {
	m.request(Effect{Kind: EffectWorkerWorktreeRemove, Worker: t.Worker, Remote: m.remote(t.Worker),
		Directory: m.cfg.Workers[t.Worker].Directory, Path: path, TaskID: t.ID}, pending{taskID: t.ID})
	t.Worktree.WorkerPath = ""
}

// onWorkerWorktreeDone takes the answers of the remote worktree effects and the import.
func (m *Machine) onWorkerWorktreeDone(p pending, ev Event) {
	switch p.kind {
	case EffectWorkerWorktreeCreate:
		m.onRemoteWorktreeCreated(p, ev)
	case EffectWorkerWorktreeDiff:
		m.onRemoteDiff(p, ev)
	case EffectWorktreeImport:
		m.onImported(p, ev)
	case EffectWorkerWorktreeList:
		m.onWorkerWorktreesListed(p, ev)
	case EffectWorkerWorktreeRemove:
		if !ev.OK {
			m.log("warn", fmt.Sprintf(worktreeRemoveFailedFmt, p.taskID, ev.Error))
		}
	}
}

// patchFileRE finds the files a git patch changes, by its "diff --git a/x b/x" lines.
var patchFileRE = regexp.MustCompile(`(?m)^diff --git a/(\S+) b/`)

// patchFiles lists the files a patch changes, their lines not counted (-1: unknown).
func patchFiles(patch string) []task.FileChange {
	var out []task.FileChange
	for _, m := range patchFileRE.FindAllStringSubmatch(patch, -1) {
		out = append(out, task.FileChange{Path: m[1], Added: -1, Removed: -1})
	}
	return out
}

// remoteNotHome is what a notice says of a worker's task whose changes did not come home: why,
// and the files the patch named.
func remoteNotHome(w *task.Worktree) []string {
	lines := []string{"worktree: " + w.MergeNote}
	for _, f := range w.Files {
		lines = append(lines, "  "+f.Path)
	}
	return lines
}
