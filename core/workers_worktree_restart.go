package core

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/asyncagents/asyncagents/core/task"
)

// What a stop of this process leaves on a worker (docs/rationale/workers.md, "A stop of the
// parent"). An isolated task's worktree there is named by the history only while the task needs
// it (Worktree.WorkerPath): a stop after the task's end was recorded and before its patch came
// home leaves a task ended with WorkerPath still set and no merge state; a stop after the import,
// or after a cancel during the worktree's making, leaves a worktree the history no longer names;
// a stop during its making leaves one the history never named. So after a restore, the first
// time each worker comes up, the machine lists the worktrees OpenCode made of its clone
// (worker.worktree.list) and, of those named for a task of this worker that the history holds,
// brings the patch home of one whose task ended before it came (importFirst, then its removal as
// at any end), and removes one its task no longer needs: the task ended, it works in another one,
// or it was restored while its worktree was being made. Such a task waits for the list before its
// worktree is made again, as a local one waits for its leftover's removal. Nothing else is
// touched: a worktree named for no task of the history, and one kept because its patch did not
// apply.

// sweepWorker lists worker name's worktrees, once after a restore that found tasks, when it comes
// up (again, should the list fail).
func (m *Machine) sweepWorker(name string) {
	w := m.link(name)
	if w == nil || w.swept || !m.sweepDue || m.wt.project == "" || m.wt.noGit {
		return
	}
	w.swept = true
	m.request(Effect{Kind: EffectWorkerWorktreeList, Worker: name, Remote: m.remote(name), Directory: m.cfg.Workers[name].Directory}, pending{worker: name})
}

// sweepPending reports whether worker name's worktrees are still to be listed after the restore.
func (m *Machine) sweepPending(name string) bool {
	w := m.link(name)
	return w != nil && !w.listed && m.sweepDue && m.wt.project != "" && !m.wt.noGit
}

// onWorkerWorktreesListed finishes what a stop left of each worktree named for a task, then
// makes the worktrees of the tasks that waited for the list.
func (m *Machine) onWorkerWorktreesListed(p pending, ev Event) {
	if w := m.link(p.worker); w != nil {
		w.listed = true
	}
	defer m.makeWaiting(p.worker)
	var got struct {
		Directories []string `json:"directories"`
	}
	if !ev.OK || json.Unmarshal(ev.Result, &got) != nil {
		why := ev.Error
		if ev.OK {
			why = "the answer is not a list of directories"
		}
		if w := m.link(p.worker); w != nil {
			w.swept = false
		}
		m.log("warn", fmt.Sprintf(workerWorktreesUnlistedFmt, p.worker, why))
		return
	}
	for _, dir := range got.Directories {
		t := m.task(worktreeTaskID(path.Base(dir)))
		if t == nil || t.Worker != p.worker || t.Worktree == nil {
			continue
		}
		w := t.Worktree
		switch {
		case dir == w.WorkerPath:
			if t.Status.Terminal() && w.Merge == "" {
				m.log("info", fmt.Sprintf(workerImportAfterStopFmt, t.ID, dir, t.Worker))
				m.notifyParent(t) // its patch comes home first, then the notice goes (importFirst)
			}
		case t.Status.Terminal() || w.WorkerPath != "" || waitsForList(t):
			m.log("info", fmt.Sprintf(workerWorktreeLeftFmt, t.ID, dir, t.Worker))
			m.request(Effect{Kind: EffectWorkerWorktreeRemove, Worker: t.Worker, Remote: m.remote(t.Worker),
				Directory: m.cfg.Workers[t.Worker].Directory, Path: dir, TaskID: t.ID}, pending{taskID: t.ID})
		}
	}
}

// waitsForList reports whether t was restored while its worktree on its worker was being made,
// and waits for that worker's list (prepareRemoteWorktree).
func waitsForList(t *run) bool {
	return !t.Status.Terminal() && !t.Queued && t.unbound && !t.creating && t.SessionID == "" &&
		t.Worktree != nil && t.Worktree.WorkerPath == "" && t.Worktree.Base == ""
}

// makeWaiting makes the worktrees of worker name's tasks that waited for its list.
func (m *Machine) makeWaiting(name string) {
	for _, id := range m.running() {
		if t := m.tasks[id]; t != nil && t.Worker == name && waitsForList(t) {
			m.startTask(t)
		}
	}
}

// OpenCode names a worktree made with a name by the name's slug (lower case, every run of other
// characters one "-"), and when that folder or branch exists already by the slug, "-" and two
// random words.
var (
	slugOtherRE      = regexp.MustCompile(`[^a-z0-9]+`)
	randomSuffixRE   = regexp.MustCompile(`^-[a-z]+-[a-z]+$`)
	worktreeIDPrefix = slugOf(task.IDPrefix)
)

// slugOf is OpenCode's slug of a worktree's name.
func slugOf(name string) string {
	return strings.Trim(slugOtherRE.ReplaceAllString(strings.ToLower(name), "-"), "-")
}

// worktreeTaskID is the ID of the task a worktree's folder name is made for, "" for none: the
// slug of a task ID ("bg-" and its letters and digits), with or without OpenCode's random words.
func worktreeTaskID(base string) string {
	rest, ok := strings.CutPrefix(base, worktreeIDPrefix+"-")
	if !ok {
		return ""
	}
	id, suffix := rest, ""
	if i := strings.IndexByte(rest, '-'); i >= 0 {
		id, suffix = rest[:i], rest[i:]
	}
	if id == "" || (suffix != "" && !randomSuffixRE.MatchString(suffix)) {
		return ""
	}
	return task.IDPrefix + id
}
