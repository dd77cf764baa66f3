// Package worktree holds the pure decisions about isolated tasks' git worktrees: their names and
// folders, which isolation a launch gets, the overlap between tasks' changes, when a merge is
// refused, and what a start does with the worktrees it finds. The machine turns these decisions
// into effects (core/worktree_tasks.go); the hosts run git (docs/rationale/worktrees.md).
package worktree

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
)

// BranchPrefix starts every branch of an isolated task.
const BranchPrefix = "asyncagents/"

// Branch is the branch of task id's worktree.
func Branch(taskID string) string { return BranchPrefix + taskID }

// Path is task id's worktree folder inside the project's worktrees folder.
func Path(folder, taskID string) string { return path.Join(folder, taskID) }

// Isolation settings (config.IsolationNone and config.IsolationWorktree say the same).
const (
	None     = "none"
	Worktree = "worktree"
)

// Resolve picks a launch's isolation: the tool's argument, else the agent's config, else the
// global config. A value that is none of the settings is an error that names it.
func Resolve(arg, agent, global string) (string, error) {
	v := arg
	if v == "" {
		v = agent
	}
	if v == "" {
		v = global
	}
	switch v {
	case "", None:
		return None, nil
	case Worktree:
		return Worktree, nil
	}
	return "", fmt.Errorf("isolation must be %q or %q, not %q", None, Worktree, v)
}

// Changes is one task's changed files, for the overlap.
type Changes struct {
	TaskID string
	Files  []string
}

// Overlap is, for each other task, the files it changed too: sorted by task, each list sorted.
type Overlap struct {
	TaskID string
	Files  []string
}

// Overlaps lists the tasks among others that changed some of files, with those files.
func Overlaps(files []string, others []Changes) []Overlap {
	mine := map[string]bool{}
	for _, f := range files {
		mine[f] = true
	}
	var out []Overlap
	for _, o := range others {
		var both []string
		for _, f := range o.Files {
			if mine[f] && !slices.Contains(both, f) {
				both = append(both, f)
			}
		}
		if len(both) > 0 {
			sort.Strings(both)
			out = append(out, Overlap{TaskID: o.TaskID, Files: both})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].TaskID < out[j].TaskID })
	return out
}

// Blocking is the files a merge would write over: those the parent has uncommitted changes in
// (dirty) that the task changed too, sorted. A merge is refused while any is left.
func Blocking(dirty, files []string) []string {
	d := map[string]bool{}
	for _, f := range dirty {
		d[f] = true
	}
	var out []string
	for _, f := range files {
		if d[f] && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

// Found is a worktree a start found: its folder, branch, and whether it holds changes.
type Found struct {
	Path    string `json:"path"`
	Branch  string `json:"branch"`
	Changed bool   `json:"changed"`
}

// Known says whether the history holds a task of this ID whose worktree is still wanted: at work,
// or with changes not merged or discarded.
type Known func(taskID string) bool

// Plan is what a start does with the worktrees it found: remove those nobody needs and that hold
// nothing, and keep (and name) those that hold changes nobody needs.
type Plan struct {
	Remove []Found
	Kept   []Found
}

// Reconcile decides over the worktrees a start found: one whose task the history keeps stays;
// one the history does not know (a crash during creation, a task forgotten) is removed when it
// holds nothing and kept, to be named, when it holds changes.
func Reconcile(found []Found, known Known) Plan {
	var p Plan
	for _, f := range found {
		id := TaskID(f)
		switch {
		case id != "" && known(id):
		case f.Changed:
			p.Kept = append(p.Kept, f)
		default:
			p.Remove = append(p.Remove, f)
		}
	}
	return p
}

// TaskID is the task a found worktree belongs to, from its branch, else its folder's name.
func TaskID(f Found) string {
	if id, ok := strings.CutPrefix(f.Branch, BranchPrefix); ok && id != "" {
		return id
	}
	return path.Base(f.Path)
}
