package core

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/asyncagents/asyncagents/core/history"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/core/text"
	"github.com/asyncagents/asyncagents/core/worktree"
)

// Isolated tasks: the machine's side of core/worktree. A task launched with isolation
// "worktree" is preparing while its worktree is created, then its session works there (every
// session effect of it carries the worktree as Directory); at its end its changes become one
// commit, and asyncagents_merge brings them into the parent's tree (tool_merge.go).

// worktreeState is what isolated tasks need of the project: its directory and worktrees folder
// (Setup), whether the host found it is no git repository, and the commits under way.
type worktreeState struct {
	project, folder string
	noGit           bool
	committing      map[string]string // task ID -> the parent its notice goes to
	// launched: isolated tasks launched by this machine whose worktree is not made yet; one that
	// is not (restored from the history) may have left a worktree behind (a crash during its
	// creation), which is removed before it is made again.
	launched map[string]bool
	merges   []mergeCall // asyncagents_merge calls, one at work at a time (tool_merge.go)
	merging  bool
}

// wtPending is what a worktree effect's answer goes back to: the tool call it answers, and the
// directory a session.status read covered.
type wtPending struct {
	callID   string
	discard  bool
	fromAPI  bool
	dir      string
	recreate bool // a leftover's removal, before the worktree is made again
}

// maxDiffBytes caps the diff a task's record keeps for the dashboard.
const maxDiffBytes = 64 << 10

// launchIsolation resolves a new launch's isolation (argument, agent, global), refusing a value
// that is none and isolation in a project the host found no git in.
func (m *Machine) launchIsolation(a *taskArgs) error {
	iso, err := worktree.Resolve(a.Isolation, m.cfg.Agents[a.Agent].Isolation, m.cfg.Isolation)
	if err != nil {
		return fmt.Errorf("asyncagents_task: %v; no task was created", err)
	}
	if iso == worktree.Worktree && m.wt.noGit {
		return fmt.Errorf(isolationNoGitFmt, m.wt.project)
	}
	a.Isolation = iso
	return nil
}

// isolate gives a new isolated task its worktree's names; startTask then creates it.
func (m *Machine) isolate(t *run, isolation string) {
	if isolation != worktree.Worktree {
		return
	}
	if t.Worker != "" {
		m.isolateRemote(t)
		return
	}
	t.Worktree = &task.Worktree{Path: worktree.Path(m.wt.folder, t.ID), Branch: worktree.Branch(t.ID)}
	if m.wt.launched == nil {
		m.wt.launched = map[string]bool{}
	}
	m.wt.launched[t.ID] = true
}

// worktreeDir is the directory t's session works in: its worktree while it exists, else "".
func worktreeDir(t *run) string {
	if t == nil || t.Worktree == nil || t.Worktree.Base == "" || !t.Worktree.Unmerged() {
		return ""
	}
	return t.Worktree.Path
}

// stampDirectory sends a session effect of an isolated task to its worktree's instance.
func (m *Machine) stampDirectory(e Effect) Effect {
	switch e.Kind {
	case EffectSessionCreate, EffectPromptAsync, EffectMessages, EffectAbort, EffectSessionGet,
		EffectSessionDelete, EffectSummarize, EffectPermissionReply, EffectSessionChildren,
		EffectSessionList:
	default:
		return e
	}
	if e.Directory != "" {
		return e
	}
	var t *run
	if e.TaskID != "" && !e.Notice {
		t = m.tasks[e.TaskID]
	} else if e.SessionID != "" {
		t = m.task(e.SessionID) // a notice goes to its parent, which may be an isolated task's child
	}
	if t != nil && t.Worker != "" && !e.Notice {
		return m.stampRemote(e, t)
	}
	e.Directory = worktreeDir(t)
	return e
}

// prepareWorktree starts creating t's worktree when it needs one; true while t waits for it.
func (m *Machine) prepareWorktree(t *run) bool {
	if t.Worktree == nil || t.Worktree.Base != "" {
		return false
	}
	if t.Worker != "" {
		return m.prepareRemoteWorktree(t)
	}
	if !t.creating && !m.wt.launched[t.ID] {
		// Restored while preparing: what the crash left of its worktree goes first.
		t.creating = true
		m.wt.launched = mapWith(m.wt.launched, t.ID)
		m.removeWorktree(t, true, wtPending{recreate: true})
		return true
	}
	if !t.creating {
		t.creating = true
		// The step's history lines go out before its other effects (persistDirty): the history
		// holds the task, its folder and branch, before the creation, and a crash during it is
		// reconciled at the next start (reconcileWorktrees).
		m.touch(t)
		m.request(Effect{Kind: EffectWorktreeCreate, TaskID: t.ID, Directory: m.wt.project, Path: t.Worktree.Path, Branch: t.Worktree.Branch}, pending{taskID: t.ID})
	}
	return true
}

func mapWith(m map[string]bool, id string) map[string]bool {
	if m == nil {
		m = map[string]bool{}
	}
	m[id] = true
	return m
}

// onLeftoverRemoved makes the worktree of a task restored while preparing, once what was left of
// it is gone.
func (m *Machine) onLeftoverRemoved(t *run) {
	t.creating = false
	if t.Status.Terminal() {
		t.Worktree.Merge = task.MergeNone
		return
	}
	m.prepareWorktree(t)
}

// onWorktreeCreated starts the session in the new worktree, or fails the task with git's words.
func (m *Machine) onWorktreeCreated(p pending, ev Event) {
	t := m.task(p.taskID)
	if t == nil || t.Worktree == nil {
		return
	}
	t.creating = false
	delete(m.wt.launched, t.ID)
	var made struct {
		Base string `json:"base"`
		Head string `json:"head"`
	}
	if ev.OK {
		_ = json.Unmarshal(ev.Result, &made)
	}
	switch {
	case !ev.OK || made.Base == "":
		t.Worktree.Merge = task.MergeNone
		if !t.Status.Terminal() {
			reason := ev.Error
			if reason == "" {
				reason = "no snapshot commit in the answer"
			}
			m.finish(t, task.StatusError, "", &task.TaskError{Name: "WorktreeError", Message: worktreeErrorPrefix + reason})
		}
	case t.Status.Terminal(): // cancelled while it was made: nothing of it stays
		t.Worktree.Merge = task.MergeNone
		m.removeWorktree(t, true, wtPending{})
	default:
		t.Worktree.Base, t.Worktree.Head = made.Base, made.Head
		m.startTask(t)
	}
	m.touch(t)
	m.storeChanged()
}

// commitFirst holds t's end notice until its worktree's changes are one commit: true while they
// are being committed (onWorktreeCommitted then tells the parent).
func (m *Machine) commitFirst(t *run) bool {
	if t.Worker != "" {
		return m.importFirst(t)
	}
	w := t.Worktree
	if w == nil || w.Base == "" || w.Merge != "" || !t.Status.Terminal() {
		return false
	}
	if _, under := m.wt.committing[t.ID]; !under {
		if m.wt.committing == nil {
			m.wt.committing = map[string]string{}
		}
		m.wt.committing[t.ID] = t.ParentSessionID
		m.request(Effect{Kind: EffectWorktreeCommit, TaskID: t.ID, Path: w.Path, Base: w.Base, Message: t.Description, MaxBytes: maxDiffBytes}, pending{taskID: t.ID})
	}
	return true
}

// onWorktreeCommitted records the task's commit and files, removes a worktree that changed
// nothing, and sends the end notice that waited.
func (m *Machine) onWorktreeCommitted(p pending, ev Event) {
	parent := m.wt.committing[p.taskID]
	delete(m.wt.committing, p.taskID)
	defer m.siblingCommitted(parent)
	t := m.task(p.taskID)
	if t == nil || t.Worktree == nil {
		return
	}
	var got struct {
		Commit  string            `json:"commit"`
		Files   []task.FileChange `json:"files"`
		Diff    string            `json:"diff"`
		DiffCut bool              `json:"diffCut"`
	}
	w := t.Worktree
	if ev.OK {
		_ = json.Unmarshal(ev.Result, &got)
	} else {
		m.log("warn", fmt.Sprintf("could not commit the worktree of task %s (kept at %s): %s", t.ID, w.Path, ev.Error))
	}
	w.Commit, w.Files, w.Diff, w.DiffCut = got.Commit, got.Files, got.Diff, got.DiffCut
	switch {
	case !ev.OK:
		w.Merge = task.MergePending // its changes are still in the folder: nothing is thrown away
	case len(got.Files) == 0 || got.Commit == "":
		w.Merge, w.Files = task.MergeNone, nil
		m.removeWorktree(t, true, wtPending{})
	default:
		w.Merge = task.MergePending
	}
	m.touch(t)
	m.storeChanged()
	m.notifyParent(t)
}

// removeWorktree removes t's worktree, and its branch when withBranch.
func (m *Machine) removeWorktree(t *run, withBranch bool, wp wtPending) {
	branch := ""
	if withBranch {
		branch = t.Worktree.Branch
	}
	if t.Worktree.Path == "" && branch == "" {
		return // a task that worked on a worker: no folder here, and the branch stays
	}
	m.request(Effect{Kind: EffectWorktreeRemove, TaskID: t.ID, Directory: m.wt.project, Path: t.Worktree.Path, Branch: branch}, pending{taskID: t.ID, wt: &wp})
}

// worktreeFiles are the paths t changed.
func worktreeFiles(t *run) []string {
	if t.Worktree == nil {
		return nil
	}
	out := make([]string, len(t.Worktree.Files))
	for i, f := range t.Worktree.Files {
		out[i] = f.Path
	}
	return out
}

// overlaps lists the project's other tasks whose branches changed some of t's files, and which.
func (m *Machine) overlaps(t *run) []worktree.Overlap {
	files := worktreeFiles(t)
	if len(files) == 0 {
		return nil
	}
	var others []worktree.Changes
	for _, id := range m.order {
		o := m.tasks[id]
		if o == nil || o.ID == t.ID || o.Worktree == nil || len(o.Worktree.Files) == 0 || o.Worktree.Merge == task.MergeDiscarded {
			continue
		}
		others = append(others, worktree.Changes{TaskID: o.ID, Files: worktreeFiles(o)})
	}
	return worktree.Overlaps(files, others)
}

// worktreeLines are the lines a notice and asyncagents_output give of t's worktree: its branch
// and merge state, the files with + and -, and the overlap with other tasks.
func (m *Machine) worktreeLines(t *run) []string {
	w := t.Worktree
	if w != nil && t.Worker != "" && w.Commit == "" && w.MergeNote != "" {
		return remoteNotHome(w) // its changes stayed on the worker (workers_worktree.go)
	}
	if w == nil || w.Merge == "" || w.Base == "" { // at work, or its worktree never existed
		return nil
	}
	if w.Merge == task.MergeNone {
		return []string{worktreeNoChanges}
	}
	lines := []string{fmt.Sprintf(worktreeBranchFmt, w.Branch, mergeStateText(w.Merge, t.ID))}
	for _, f := range w.Files {
		lines = append(lines, "  "+fileChangeText(f))
	}
	for _, o := range m.overlaps(t) {
		lines = append(lines, fmt.Sprintf(worktreeOverlapFmt, o.TaskID, strings.Join(o.Files, ", ")))
	}
	return lines
}

// fileChangeText is "src/x.go +3 −1", or "src/x.png (binary)".
func fileChangeText(f task.FileChange) string {
	if f.Added < 0 || f.Removed < 0 {
		return f.Path + " (binary)"
	}
	return f.Path + " " + text.LineCounts(f.Added, f.Removed)
}

func mergeStateText(state, id string) string {
	switch state {
	case task.MergeMerged:
		return worktreeMerged
	case task.MergeDiscarded:
		return worktreeDiscarded
	}
	return fmt.Sprintf(worktreePendingFmt, id, id)
}

// pollWorktrees reads session.status once per worktree in use: OpenCode's status lists the busy
// sessions of one instance (directory) only.
func (m *Machine) pollWorktrees() {
	seen := map[string]bool{}
	for _, id := range m.running() {
		if t := m.tasks[id]; t != nil && t.Worker != "" {
			continue // polled on its worker (pollWorkers)
		}
		if dir := worktreeDir(m.tasks[id]); dir != "" && !seen[dir] {
			seen[dir] = true
			m.request(Effect{Kind: EffectStatus, Directory: dir}, pending{wt: &wtPending{dir: dir}})
		}
	}
}

// coversDir reports whether a status read answers for sessions working in dir.
func (p pending) coversDir(dir string) bool {
	read := ""
	if p.wt != nil {
		read = p.wt.dir
	}
	return read == dir
}

// reconcileWorktrees asks, at start, for the worktrees the project has.
func (m *Machine) reconcileWorktrees() {
	if m.wt.project == "" || m.wt.folder == "" || m.wt.noGit {
		return
	}
	m.request(Effect{Kind: EffectWorktreeList, Directory: m.wt.project, Path: m.wt.folder}, pending{})
}

// onWorktreesListed removes the worktrees no task needs that hold nothing, and names those that
// hold changes (a log line).
func (m *Machine) onWorktreesListed(ev Event) {
	var got struct {
		Worktrees []worktree.Found `json:"worktrees"`
	}
	if !ev.OK || json.Unmarshal(ev.Result, &got) != nil {
		m.log("warn", "could not list the worktrees of isolated tasks: "+ev.Error)
		return
	}
	plan := worktree.Reconcile(got.Worktrees, func(id string) bool {
		t := m.task(id)
		return t != nil && t.Worktree != nil && t.Worktree.Unmerged()
	})
	for _, f := range plan.Remove {
		m.request(Effect{Kind: EffectWorktreeRemove, TaskID: worktree.TaskID(f), Directory: m.wt.project, Path: f.Path, Branch: f.Branch}, pending{taskID: worktree.TaskID(f)})
	}
	if len(plan.Kept) > 0 {
		var names []string
		for _, f := range plan.Kept {
			names = append(names, f.Path+" ("+f.Branch+")")
		}
		m.log("warn", fmt.Sprintf(worktreesLeftFmt, strings.Join(names, ", ")))
	}
}

// holdsUnmerged reports whether t's branch holds changes nobody merged or discarded yet (read
// whole first: a restored task's head has no worktree).
func holdsUnmerged(t *run) bool {
	history.Load(&t.Task)
	return t.Worktree.Unmerged()
}

// worktreeBlock is worktreeLines as a block of a notice or an answer ("" for a task with none).
func (m *Machine) worktreeBlock(t *run) string {
	lines := m.worktreeLines(t)
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n\n"
}

// worktreeGone reports whether an isolated task's worktree no longer exists (it changed nothing,
// or was merged or discarded): a resume cannot go on in it.
func worktreeGone(t *run) bool {
	return t.Worktree != nil && !t.Worktree.Unmerged()
}

// anyIsolated reports whether any of tasks ran in a worktree.
func anyIsolated(tasks []task.Task) bool {
	for i := range tasks {
		if tasks[i].Worktree != nil {
			return true
		}
	}
	return false
}

// branchCells are a task's BRANCH and MERGE cells in `asyncagents ls`: "-" where none applies,
// "at work" before its end.
func branchCells(t *task.Task) []string {
	w := t.Worktree
	switch {
	case w == nil:
		return []string{"-", "-"}
	case w.Merge == "":
		return []string{w.Branch, "at work"}
	case w.Merge == task.MergeNone || w.Merge == task.MergeDiscarded:
		return []string{"-", w.Merge}
	}
	return []string{w.Branch, w.Merge}
}
