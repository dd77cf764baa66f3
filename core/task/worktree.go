package task

// Worktree is where an isolated task's child works and what came of it: its folder and branch
// (core/worktree names them), the snapshot of the parent's tree it started from (Base) and the
// parent's HEAD then, and once the task ended the commit of its changes, the files it changed,
// its diff for the dashboard (cut to the core's cap: DiffCut) and the merge state.
type Worktree struct {
	// Path is the local folder; "" for a task on a worker, whose worktree is WorkerPath, a folder
	// of the worker's clone (its changes come home as a commit on Branch: worktree.import).
	Path       string       `json:"path"`
	WorkerPath string       `json:"workerPath,omitempty"`
	Branch     string       `json:"branch"`
	Base       string       `json:"base,omitempty"`
	Head       string       `json:"head,omitempty"`
	Commit     string       `json:"commit,omitempty"`
	Files      []FileChange `json:"files,omitempty"`
	Diff       string       `json:"diff,omitempty"`
	DiffCut    bool         `json:"diffCut,omitempty"`
	Merge      string       `json:"merge,omitempty"`
	// MergeNote is the answer of the latest merge or discard asked for (asyncagents_merge or
	// the dashboard's Merge button): the dashboard shows it.
	MergeNote string `json:"mergeNote,omitempty"`
}

// FileChange is one file a task changed, with its added and removed lines (-1 each for a
// binary file), as git's numstat gives them.
type FileChange struct {
	Path    string `json:"path"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
}

// Merge states of a task's worktree once it ended: its changes wait for asyncagents_merge
// (pending), were applied to the parent's tree (merged) or thrown away (discarded), or there were
// none (none).
const (
	MergePending   = "pending"
	MergeMerged    = "merged"
	MergeDiscarded = "discarded"
	MergeNone      = "none"
)

// Unmerged reports whether the worktree holds changes nobody merged or discarded yet: a task
// still at work (no merge state yet) or one whose merge is pending.
func (w *Worktree) Unmerged() bool {
	return w != nil && (w.Merge == "" || w.Merge == MergePending)
}
