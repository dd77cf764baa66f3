package core

// --- The words of isolated tasks (worktree_tasks.go, tool_merge.go). ---

const (
	isolationNoGitFmt       = "asyncagents_task: isolation \"worktree\" needs a git repository, and %s is in none; launch without isolation, or run git init first; no task was created"
	isolationOnResume       = "asyncagents_task: isolation applies to a new task; a resume goes on where the task worked; no task was resumed"
	resumeWorktreeGoneFmt   = "task %s's worktree is removed (its changes: %s), so it cannot go on where it worked; launch a new task with isolation \"worktree\" instead"
	worktreeErrorPrefix     = "could not create the task's worktree: "
	worktreeNoChanges       = "worktree: no changes (its worktree and branch are removed)"
	worktreeBranchFmt       = "branch: %s (%s)"
	worktreePendingFmt      = "not merged: asyncagents_merge(task_id: %q) applies it to your working tree; asyncagents_merge(task_id: %q, discard: true) throws it away"
	worktreeMerged          = "merged"
	worktreeDiscarded       = "discarded"
	worktreeOverlapFmt      = "  also changed by %s: %s"
	mergeNoTaskFmt          = "asyncagents_merge: no background task has task_id %s; call asyncagents_list to see this session's tasks"
	mergeOtherSessionFmt    = "asyncagents_merge: task %s belongs to another session; only its own session can merge it"
	mergeNotIsolatedFmt     = "asyncagents_merge: task %s ran in your working tree (no isolation), so it has no branch to merge: its changes are already there"
	mergeRunningFmt         = "asyncagents_merge: task %s is still %s; merge it once it has ended (its notice says so)"
	mergeNothingFmt         = "asyncagents_merge: task %s changed nothing: there is nothing to merge"
	mergeDoneFmt            = "asyncagents_merge: task %s was already %s"
	mergeNoCommitFmt        = "asyncagents_merge: task %s's changes could not be committed; its worktree is kept at %s"
	mergeNeedsTaskID        = "asyncagents_merge: give task_id, the task whose changes to merge"
	mergeDirtyFmt           = "asyncagents_merge: not merged: your working tree has uncommitted changes in files task %s changed too: %s. Commit or stash them (or undo them), then merge again; nothing was changed"
	mergeConflictFmt        = "asyncagents_merge: not merged: task %s's changes conflict with your working tree in %s. Your working tree is unchanged; the branch %s is kept, to merge by hand (git merge %s) or to discard"
	mergeFailedFmt          = "asyncagents_merge: task %s could not be merged: %s; your working tree is unchanged"
	mergeAppliedFmt         = "Merged task %s: its changes are in your working tree as uncommitted changes (%s). The branch %s is kept; its worktree is removed."
	mergeDiscardedFmt       = "Discarded task %s: its worktree and the branch %s are removed."
	mergeDiscardFailedFmt   = "asyncagents_merge: could not discard task %s: %s"
	clearUnmergedFmt        = "Kept %s with changes not merged (asyncagents_merge merges or discards them): %s."
	worktreesLeftFmt        = "worktrees kept at start, holding changes no task of the history claims: %s"
	worktreeRemoveFailedFmt = "could not remove the worktree of task %s: %s"
)
