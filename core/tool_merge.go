package core

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/asyncagents/asyncagents/core/httpapi"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/core/worktree"
)

// ToolMerge brings an isolated task's changes into the parent's working tree, or discards them.
const ToolMerge = "asyncagents_merge"

func mergeTool() ToolSpec {
	return ToolSpec{
		Name: ToolMerge,
		Description: `Apply the changes of a background task launched with isolation: "worktree" to your working tree, or throw them away.

An isolated task works in a git worktree of its own, on the branch asyncagents/<task_id>, so that parallel tasks that edit code never touch your files or each other's. When it ends, its notice lists the files it changed (with + and −), and the other tasks that changed the same files. Its changes wait there until you merge or discard them.

asyncagents_merge(task_id) applies them to your working tree as uncommitted changes, by a three-way merge from the tree the task started from. It refuses, naming the files, when you have uncommitted changes in files the task changed too; on a conflict it names the files and leaves your tree exactly as it was (the branch is kept). Merge tasks one after another, reading each answer: after two tasks changed the same file, the second may conflict. With discard: true, the task's worktree and branch are removed and its changes are gone.`,
		Args: []ArgSpec{
			{Name: "task_id", Type: "string", Required: true, Description: "The isolated task whose changes to merge: its task_id (or its session_id)"},
			{Name: "discard", Type: "boolean", Description: "Throw the task's changes away instead of merging them (default false)"},
		},
	}
}

type mergeArgs struct {
	TaskID  string `json:"task_id"`
	Discard bool   `json:"discard"`
}

// mergeCall is one asyncagents_merge call waiting for, or at, its turn.
type mergeCall struct {
	callID, taskID string
	discard        bool
	fromAPI        bool // the dashboard's Merge button: no tool call to answer
}

// onMergeCall checks the call, then queues it: merges run one at a time, so that each reads the
// working tree the one before left.
func (m *Machine) onMergeCall(ev Event) {
	var a mergeArgs
	if err := parseArgs(ev.Args, &a); err != nil {
		m.failTool(ev.CallID, "asyncagents_merge: "+err.Error())
		return
	}
	a.TaskID = strings.TrimSpace(a.TaskID)
	t := m.task(a.TaskID)
	if msg := m.mergeRefusal(a, t, ev.SessionID); msg != "" {
		m.failTool(ev.CallID, msg)
		return
	}
	m.wt.merges = append(m.wt.merges, mergeCall{callID: ev.CallID, taskID: t.ID, discard: a.Discard})
	m.nextMerge()
}

// mergeRefusal says why a merge of t cannot go on, or "".
func (m *Machine) mergeRefusal(a mergeArgs, t *run, session string) string {
	switch {
	case a.TaskID == "":
		return mergeNeedsTaskID
	case t == nil:
		return fmt.Sprintf(mergeNoTaskFmt, quote(a.TaskID))
	case t.ParentSessionID != session:
		return fmt.Sprintf(mergeOtherSessionFmt, t.ID)
	case t.Worktree == nil:
		return fmt.Sprintf(mergeNotIsolatedFmt, t.ID)
	case !t.Status.Terminal() || t.Worktree.Merge == "":
		return fmt.Sprintf(mergeRunningFmt, t.ID, t.Shown())
	case t.Worktree.Merge == task.MergeNone:
		return fmt.Sprintf(mergeNothingFmt, t.ID)
	case t.Worktree.Merge != task.MergePending:
		return fmt.Sprintf(mergeDoneFmt, t.ID, t.Worktree.Merge)
	case t.Worktree.Commit == "" && !a.Discard:
		return fmt.Sprintf(mergeNoCommitFmt, t.ID, t.Worktree.Path)
	}
	return ""
}

// nextMerge starts the next queued merge when none is at work.
func (m *Machine) nextMerge() {
	for !m.wt.merging && len(m.wt.merges) > 0 {
		c := m.wt.merges[0]
		m.wt.merges = m.wt.merges[1:]
		t := m.task(c.taskID)
		if t == nil || t.Worktree == nil || t.Worktree.Merge != task.MergePending {
			m.mergeAnswer(c.taskID, c.callID, "", fmt.Sprintf(mergeDoneFmt, c.taskID, "merged or discarded"))
			continue
		}
		m.wt.merging = true
		wp := &wtPending{callID: c.callID, discard: c.discard, fromAPI: c.fromAPI}
		if c.discard {
			m.removeWorktree(t, true, *wp)
			continue
		}
		m.request(Effect{Kind: EffectWorktreeInspect, TaskID: t.ID, Directory: m.wt.project}, pending{taskID: t.ID, wt: wp})
	}
}

// onWorktreeDone takes the answer of a worktree effect.
func (m *Machine) onWorktreeDone(p pending, ev Event) {
	switch p.kind {
	case EffectWorktreeCreate:
		m.onWorktreeCreated(p, ev)
	case EffectWorktreeCommit:
		m.onWorktreeCommitted(p, ev)
	case EffectWorktreeInspect:
		m.onInspected(p, ev)
	case EffectWorktreeMerge:
		m.onMerged(p, ev)
	case EffectWorktreeRemove:
		m.onWorktreeRemoved(p, ev)
	case EffectWorktreeList:
		m.onWorktreesListed(ev)
	default:
		m.onWorkerWorktreeDone(p, ev)
	}
}

// endMerge answers the merge at work and lets the next one go.
func (m *Machine) endMerge(taskID string, wp *wtPending, output, errText string) {
	callID := ""
	if !wp.fromAPI {
		callID = wp.callID
	}
	m.mergeAnswer(taskID, callID, output, errText)
	m.wt.merging = false
	m.nextMerge()
}

// mergeAnswer answers a merge: the tool call (none for the dashboard's), and the task's
// mergeNote, which the dashboard shows.
func (m *Machine) mergeAnswer(taskID, callID, output, errText string) {
	if t := m.task(taskID); t != nil && t.Worktree != nil {
		t.Worktree.MergeNote = output + errText
		m.touch(t)
		m.storeChanged()
	}
	switch {
	case callID == "":
	case errText != "":
		m.failTool(callID, errText)
	default:
		m.replyTool(callID, output, map[string]any{"title": "merge"})
	}
}

// mergeFromAPI queues the dashboard's merge and answers 202 with the task as it is.
func (m *Machine) mergeFromAPI(r httpapi.Response, now int64) (httpapi.Response, []Effect) {
	id := r.Merge.ID
	discard := r.MergeDiscard
	r.Merge, r.MergeDiscard = nil, false
	t := m.task(id)
	if t == nil {
		return httpapi.Fail(409, fmt.Sprintf(apiForeignMergeFmt, id)), nil
	}
	m.changes++
	if now > m.now {
		m.now = now
	}
	m.out = nil
	m.wt.merges = append(m.wt.merges, mergeCall{taskID: t.ID, discard: discard, fromAPI: true})
	m.nextMerge()
	m.persistDirty()
	effects := m.out
	m.out = nil
	out := t.Task
	httpapi.Shown(&out, m.now)
	b, err := task.AppendJSON(nil, &out)
	if err != nil {
		return httpapi.Fail(500, "internal error: encoding the response failed"), effects
	}
	r.Body = string(b)
	return r, effects
}

func (m *Machine) onInspected(p pending, ev Event) {
	t := m.task(p.taskID)
	if t == nil || t.Worktree == nil {
		m.endMerge(p.taskID, p.wt, "", fmt.Sprintf(mergeNoTaskFmt, quote(p.taskID)))
		return
	}
	var got struct {
		Dirty []string `json:"dirty"`
	}
	if !ev.OK || json.Unmarshal(ev.Result, &got) != nil {
		m.endMerge(p.taskID, p.wt, "", fmt.Sprintf(mergeFailedFmt, t.ID, ev.Error))
		return
	}
	if both := worktree.Blocking(got.Dirty, worktreeFiles(t)); len(both) > 0 {
		m.endMerge(p.taskID, p.wt, "", fmt.Sprintf(mergeDirtyFmt, t.ID, strings.Join(both, ", ")))
		return
	}
	w := t.Worktree
	m.request(Effect{Kind: EffectWorktreeMerge, TaskID: t.ID, Directory: m.wt.project, Base: w.Base, Commit: w.Commit}, pending{taskID: t.ID, wt: p.wt})
}

func (m *Machine) onMerged(p pending, ev Event) {
	t := m.task(p.taskID)
	var got struct {
		Conflicts []string `json:"conflicts"`
		Applied   []string `json:"applied"`
	}
	switch {
	case t == nil || t.Worktree == nil:
		m.endMerge(p.taskID, p.wt, "", fmt.Sprintf(mergeNoTaskFmt, quote(p.taskID)))
	case !ev.OK || json.Unmarshal(ev.Result, &got) != nil:
		m.endMerge(p.taskID, p.wt, "", fmt.Sprintf(mergeFailedFmt, t.ID, ev.Error))
	case len(got.Conflicts) > 0:
		w := t.Worktree
		m.endMerge(p.taskID, p.wt, "", fmt.Sprintf(mergeConflictFmt, t.ID, strings.Join(got.Conflicts, ", "), w.Branch, w.Branch))
	default:
		t.Worktree.Merge = task.MergeMerged
		m.touch(t)
		m.storeChanged()
		m.removeWorktree(t, false, wtPending{})
		m.endMerge(p.taskID, p.wt, fmt.Sprintf(mergeAppliedFmt, t.ID, strings.Join(got.Applied, ", "), t.Worktree.Branch), "")
	}
}

// onWorktreeRemoved ends a discard; a removal that failed is logged (the next start retries it).
func (m *Machine) onWorktreeRemoved(p pending, ev Event) {
	t := m.task(p.taskID)
	if !ev.OK {
		m.log("warn", fmt.Sprintf(worktreeRemoveFailedFmt, p.taskID, ev.Error))
	}
	if p.wt != nil && p.wt.recreate && t != nil && t.Worktree != nil {
		m.onLeftoverRemoved(t)
		return
	}
	if p.wt == nil || !p.wt.discard {
		return
	}
	switch {
	case !ev.OK:
		m.endMerge(p.taskID, p.wt, "", fmt.Sprintf(mergeDiscardFailedFmt, p.taskID, ev.Error))
	case t == nil || t.Worktree == nil:
		m.endMerge(p.taskID, p.wt, "", fmt.Sprintf(mergeNoTaskFmt, quote(p.taskID)))
	default:
		t.Worktree.Merge = task.MergeDiscarded
		m.touch(t)
		m.storeChanged()
		m.endMerge(p.taskID, p.wt, fmt.Sprintf(mergeDiscardedFmt, t.ID, t.Worktree.Branch), "")
	}
}
