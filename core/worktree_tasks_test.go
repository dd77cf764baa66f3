package core

import (
	"fmt"
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// An isolated task is preparing until its worktree exists; its session is created, prompted and
// polled in the worktree, while the notice to the parent goes to the parent's own directory.
func TestIsolatedTaskWorksInItsWorktree(t *testing.T) {
	h := newWT(t, config.Config{})
	h.hold[EffectWorktreeCreate] = true
	id, reply, eff := h.launchIso("edit", `,"isolation":"worktree"`)
	require.Empty(t, reply.Error)
	require.Empty(t, ofKind(eff, EffectSessionCreate), "no session before the worktree")
	require.Len(t, h.held, 1)
	c := h.held[0]
	require.Equal(t, wtProject, c.Directory)
	require.Equal(t, wtFolder+"/"+id, c.Path)
	require.Equal(t, "asyncagents/"+id, c.Branch)
	require.Equal(t, task.StatusPreparing, h.m.task(id).Shown())
	require.Contains(t, h.m.task(id).public().Worktree.Branch, id, "the record names the branch before the worktree exists")

	eff = h.release()
	create := ofKind(eff, EffectSessionCreate)
	require.Len(t, create, 1)
	path := wtFolder + "/" + id
	require.Equal(t, path, create[0].Directory)
	require.Equal(t, path, prompts(eff, h.m.task(id).SessionID)[0].Directory)
	require.Equal(t, task.StatusRunning, h.m.task(id).Shown())

	// The poll reads session.status once for the plugin's directory and once per worktree.
	plain, _, _ := h.launchIso("plain", "")
	require.Nil(t, h.m.task(plain).Worktree)
	polls := ofKind(h.run(Event{Type: EventTimer, TimerID: pollTimer}), EffectStatus)
	require.Len(t, polls, 2)
	require.Equal(t, []string{"", path}, []string{polls[0].Directory, polls[1].Directory})

	h.files[id] = `[{"path":"src/x.go","added":3,"removed":1}]`
	eff = h.finishTask(id)
	notices := ofKind(eff, EffectPromptAsync)
	require.NotEmpty(t, notices)
	require.Empty(t, notices[len(notices)-1].Directory, "the parent works in its own directory")
}

// Every outcome of an isolated task's end: its files in the notice with + and -, the overlap
// with a sibling, no changes (worktree and branch removed), a creation refused by git.
func TestIsolatedTaskEnds(t *testing.T) {
	h := newWT(t, config.Config{Notify: config.NotifyConfig{Wake: config.WakeEach}})
	a, _, _ := h.launchIso("a", `,"isolation":"worktree"`)
	b, _, _ := h.launchIso("b", `,"isolation":"worktree"`)
	none, _, _ := h.launchIso("none", `,"isolation":"worktree"`)
	h.files[a] = `[{"path":"src/x.go","added":3,"removed":1},{"path":"logo.png","added":-1,"removed":-1}]`
	h.files[b] = `[{"path":"src/x.go","added":1,"removed":0}]`
	h.finishTask(a)
	eff := h.finishTask(b)
	text := noticeText(eff)
	require.Contains(t, text, "branch: asyncagents/"+b)
	require.Contains(t, text, "src/x.go +1 −0")
	require.Contains(t, text, fmt.Sprintf("also changed by %s: src/x.go", a))
	w := h.m.task(a).Worktree
	require.Equal(t, task.MergePending, w.Merge)
	require.Equal(t, "c_"+a, w.Commit)
	require.Equal(t, "diff of "+a, w.Diff)
	require.Contains(t, h.outputText(a), "logo.png (binary)")
	require.Contains(t, h.outputText(a), "also changed by "+b)

	eff = h.finishTask(none)
	require.Contains(t, noticeText(eff), "no changes")
	require.Equal(t, task.MergeNone, h.m.task(none).Worktree.Merge)
	rm := h.doneOfKind(EffectWorktreeRemove)
	require.Len(t, rm, 1)
	require.Equal(t, "asyncagents/"+none, rm[0].Branch, "the branch goes with the worktree")

	h.createErr = "the repository is in the middle of a merge"
	bad, reply, _ := h.launchIso("bad", `,"isolation":"worktree"`)
	require.Empty(t, reply.Error, "the launch answers at once; the task fails")
	tk := h.m.task(bad)
	require.Equal(t, task.StatusError, tk.Status)
	require.Contains(t, tk.Error.Message, "the repository is in the middle of a merge")
	require.Equal(t, task.MergeNone, tk.Worktree.Merge)
	require.Empty(t, ofKind(h.effects, EffectSessionCreate)[3:], "no session for the failed one")
}

func noticeText(eff []Effect) string {
	var b strings.Builder
	for _, e := range ofKind(eff, EffectPromptAsync) {
		for _, p := range e.Parts {
			b.WriteString(p.Text + "\n")
		}
	}
	return b.String()
}

// The isolation argument and options, and the inputs the core refuses before creating anything.
func TestIsolationChoiceAndBadInput(t *testing.T) {
	for _, c := range []struct {
		name  string
		cfg   config.Config
		setup Setup
		args  string
		iso   bool
		err   string
	}{
		{name: "default none", args: ``},
		{name: "argument", args: `,"isolation":"worktree"`, iso: true},
		{name: "argument none over global", cfg: config.Config{Isolation: "worktree"}, args: `,"isolation":"none"`},
		{name: "global", cfg: config.Config{Isolation: "worktree"}, iso: true},
		{name: "agent over global", cfg: config.Config{Isolation: "none", Agents: map[string]config.AgentModels{"general": {Isolation: "worktree"}}}, iso: true},
		{name: "wrong value", args: `,"isolation":"yes"`, err: `isolation must be "none" or "worktree", not "yes"; no task was created`},
		{name: "wrong type", args: `,"isolation":true`, err: "isolation"},
		{name: "no git", setup: Setup{NoGit: true}, args: `,"isolation":"worktree"`, err: `needs a git repository, and /p is in none`},
		{name: "no git, no isolation", setup: Setup{NoGit: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newWT(t, c.cfg)
			c.setup.Project, c.setup.Worktrees = wtProject, wtFolder
			h.m = NewMachineWith(c.cfg, c.setup)
			id, reply, eff := h.launchIso("x", c.args)
			if c.err != "" {
				require.Contains(t, reply.Error, c.err)
				require.Empty(t, h.m.order, "nothing was created")
				require.Empty(t, ofKind(eff, EffectWorktreeCreate))
				return
			}
			require.Empty(t, reply.Error)
			require.Equal(t, c.iso, h.m.task(id).Worktree != nil)
			require.Equal(t, c.iso, len(ofKind(eff, EffectWorktreeCreate)) == 1)
		})
	}
	h := newWT(t, config.Config{})
	id, _, _ := h.launchIso("r", `,"isolation":"worktree"`)
	h.finishTask(id)
	eff := h.run(Event{Type: EventToolCall, CallID: "res", Tool: ToolTask, SessionID: "ses_p", Args: []byte(fmt.Sprintf(`{"resume":%q,"prompt":"more","isolation":"worktree"}`, id))})
	require.Contains(t, ofKind(eff, EffectToolReply)[0].Error, "isolation applies to a new task")
}
