package core

import (
	"fmt"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// Every answer of asyncagents_merge: the refusals (bad input, a task with no branch, one still
// at work, the parent's uncommitted changes in the same files), a conflict (tree untouched,
// branch kept), a clean merge (worktree removed, branch kept), a discard.
func TestMergeAnswers(t *testing.T) {
	type setup struct {
		h          *wtHarness
		iso, plain string
		running    string
		nothing    string
	}
	prepare := func(t *testing.T) setup {
		h := newWT(t, config.Config{})
		iso, _, _ := h.launchIso("iso", `,"isolation":"worktree"`)
		plain, _, _ := h.launchIso("plain", "")
		running, _, _ := h.launchIso("running", `,"isolation":"worktree"`)
		nothing, _, _ := h.launchIso("nothing", `,"isolation":"worktree"`)
		h.files[iso] = `[{"path":"src/x.go","added":3,"removed":1}]`
		h.finishTask(iso)
		h.finishTask(plain)
		h.finishTask(nothing)
		return setup{h: h, iso: iso, plain: plain, running: running, nothing: nothing}
	}
	for _, c := range []struct {
		name  string
		args  func(s setup) string
		dirty []string
		clash []string
		err   string
		out   string
		merge string
		check func(t *testing.T, s setup)
	}{
		{name: "no task_id", args: func(setup) string { return `{}` }, err: "give task_id"},
		{name: "unknown task", args: func(setup) string { return `{"task_id":"bg_nope"}` }, err: `no background task has task_id "bg_nope"`},
		{name: "wrong type", args: func(setup) string { return `{"task_id":1}` }, err: "task_id"},
		{name: "no branch", args: func(s setup) string { return fmt.Sprintf(`{"task_id":%q}`, s.plain) }, err: "no branch to merge"},
		{name: "still running", args: func(s setup) string { return fmt.Sprintf(`{"task_id":%q}`, s.running) }, err: "is still running"},
		{name: "nothing changed", args: func(s setup) string { return fmt.Sprintf(`{"task_id":%q}`, s.nothing) }, err: "changed nothing"},
		{name: "dirty in the same files", args: func(s setup) string { return fmt.Sprintf(`{"task_id":%q}`, s.iso) }, dirty: []string{"README.md", "src/x.go"},
			err: "uncommitted changes in files task", merge: task.MergePending,
			check: func(t *testing.T, s setup) { require.Empty(t, s.h.doneOfKind(EffectWorktreeMerge), "nothing was merged") }},
		{name: "dirty elsewhere", args: func(s setup) string { return fmt.Sprintf(`{"task_id":%q}`, s.iso) }, dirty: []string{"README.md"},
			out: "Merged task", merge: task.MergeMerged},
		{name: "conflict", args: func(s setup) string { return fmt.Sprintf(`{"task_id":%q}`, s.iso) }, clash: []string{"src/x.go"},
			err: "conflict with your working tree in src/x.go", merge: task.MergePending,
			check: func(t *testing.T, s setup) {
				require.Len(t, s.h.doneOfKind(EffectWorktreeRemove), 1, "only the empty task's worktree is removed")
			}},
		{name: "clean", args: func(s setup) string { return fmt.Sprintf(`{"task_id":%q}`, s.iso) }, out: "Merged task", merge: task.MergeMerged,
			check: func(t *testing.T, s setup) {
				m := s.h.doneOfKind(EffectWorktreeMerge)[0]
				require.Equal(t, "snap_"+s.iso, m.Base, "the snapshot the task started from is the merge base")
				require.Equal(t, "c_"+s.iso, m.Commit)
				rm := s.h.doneOfKind(EffectWorktreeRemove)
				require.Empty(t, rm[len(rm)-1].Branch, "the branch is kept")
				again := s.h.merge(fmt.Sprintf(`{"task_id":%q}`, s.iso))
				require.Contains(t, again.Error, "was already merged")
			}},
		{name: "discard", args: func(s setup) string { return fmt.Sprintf(`{"task_id":%q,"discard":true}`, s.iso) }, out: "Discarded task", merge: task.MergeDiscarded,
			check: func(t *testing.T, s setup) {
				rm := s.h.doneOfKind(EffectWorktreeRemove)
				require.Equal(t, "asyncagents/"+s.iso, rm[len(rm)-1].Branch, "the branch goes too")
				require.Empty(t, s.h.doneOfKind(EffectWorktreeInspect))
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := prepare(t)
			s.h.dirty = c.dirty
			s.h.conflicts[s.iso] = c.clash
			reply := s.h.merge(c.args(s))
			if c.err != "" {
				require.Contains(t, reply.Error, c.err)
			} else {
				require.Empty(t, reply.Error)
				require.Contains(t, reply.Output, c.out)
			}
			if c.merge != "" {
				require.Equal(t, c.merge, s.h.m.task(s.iso).Worktree.Merge)
			}
			if c.check != nil {
				c.check(t, s)
			}
		})
	}
}

// Merges asked for together run one after another, each answered with its own outcome; another
// session's task is refused.
func TestMergesOneAfterAnother(t *testing.T) {
	h := newWT(t, config.Config{})
	a, _, _ := h.launchIso("a", `,"isolation":"worktree"`)
	b, _, _ := h.launchIso("b", `,"isolation":"worktree"`)
	h.files[a] = `[{"path":"src/x.go","added":1,"removed":0}]`
	h.files[b] = `[{"path":"src/x.go","added":2,"removed":0}]`
	h.finishTask(a)
	h.finishTask(b)
	h.conflicts[b] = []string{"src/x.go"}
	h.hold[EffectWorktreeInspect] = true
	h.run(Event{Type: EventToolCall, CallID: "ma", Tool: ToolMerge, SessionID: "ses_p", Args: []byte(fmt.Sprintf(`{"task_id":%q}`, a))})
	h.run(Event{Type: EventToolCall, CallID: "mb", Tool: ToolMerge, SessionID: "ses_p", Args: []byte(fmt.Sprintf(`{"task_id":%q}`, b))})
	require.Len(t, h.held, 1, "the second merge waits for the first")
	delete(h.hold, EffectWorktreeInspect)
	eff := h.release()
	replies := ofKind(eff, EffectToolReply)
	require.Len(t, replies, 2)
	require.Equal(t, "ma", replies[0].CallID)
	require.Contains(t, replies[0].Output, "Merged task "+a)
	require.Equal(t, "mb", replies[1].CallID)
	require.Contains(t, replies[1].Error, "conflict")

	other := ofKind(h.run(Event{Type: EventToolCall, CallID: "mo", Tool: ToolMerge, SessionID: "ses_other", Args: []byte(fmt.Sprintf(`{"task_id":%q}`, b))}), EffectToolReply)[0]
	require.Contains(t, other.Error, "belongs to another session")
}

// asyncagents_clear keeps the tasks whose branches wait for a merge, and says which.
func TestClearKeepsUnmergedBranches(t *testing.T) {
	h := newWT(t, config.Config{})
	kept, _, _ := h.launchIso("kept", `,"isolation":"worktree"`)
	gone, _, _ := h.launchIso("gone", `,"isolation":"worktree"`)
	plain, _, _ := h.launchIso("plain", "")
	h.files[kept] = `[{"path":"a.go","added":1,"removed":0}]`
	h.finishTask(kept)
	h.finishTask(gone)
	h.finishTask(plain)
	out := ofKind(h.run(Event{Type: EventToolCall, CallID: "clear", Tool: ToolClear, SessionID: "ses_p"}), EffectToolReply)[0].Output
	require.Contains(t, out, "Cleared 2 finished tasks.")
	require.Contains(t, out, "Kept 1 finished task with changes not merged")
	require.Contains(t, out, kept)
	require.NotNil(t, h.m.task(kept))
	require.Nil(t, h.m.task(gone))
}
