package worktree

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNames(t *testing.T) {
	require.Equal(t, "asyncagents/bg_1", Branch("bg_1"))
	require.Equal(t, "/d/worktrees/k/bg_1", Path("/d/worktrees/k", "bg_1"))
	require.Equal(t, "bg_1", TaskID(Found{Path: "/x/other", Branch: "asyncagents/bg_1"}))
	require.Equal(t, "bg_2", TaskID(Found{Path: "/d/worktrees/k/bg_2"}), "a folder git no longer knows")
}

func TestResolve(t *testing.T) {
	for _, c := range []struct{ arg, agent, global, want, err string }{
		{want: None},
		{global: Worktree, want: Worktree},
		{agent: Worktree, global: None, want: Worktree},
		{arg: None, agent: Worktree, global: Worktree, want: None},
		{arg: "Worktree", err: `isolation must be "none" or "worktree", not "Worktree"`},
	} {
		got, err := Resolve(c.arg, c.agent, c.global)
		if c.err != "" {
			require.EqualError(t, err, c.err)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, c.want, got)
	}
}

func TestOverlapsAndBlocking(t *testing.T) {
	others := []Changes{{TaskID: "bg_c", Files: []string{"b.go", "a.go"}}, {TaskID: "bg_a", Files: []string{"z.go"}}, {TaskID: "bg_b", Files: []string{"a.go", "a.go"}}}
	require.Equal(t, []Overlap{{TaskID: "bg_b", Files: []string{"a.go"}}, {TaskID: "bg_c", Files: []string{"a.go", "b.go"}}}, Overlaps([]string{"b.go", "a.go"}, others))
	require.Empty(t, Overlaps(nil, others))
	require.Equal(t, []string{"a.go", "c.go"}, Blocking([]string{"c.go", "a.go", "d.go"}, []string{"c.go", "a.go", "b.go"}))
	require.Empty(t, Blocking(nil, []string{"a.go"}))
}

// A start keeps what a task of the history needs, removes the empty rest, and names the rest
// that holds changes.
func TestReconcile(t *testing.T) {
	found := []Found{
		{Path: "/w/bg_live", Branch: "asyncagents/bg_live", Changed: true},
		{Path: "/w/bg_crash", Branch: "asyncagents/bg_crash"},
		{Path: "/w/bg_lost", Branch: "asyncagents/bg_lost", Changed: true},
		{Path: "/w/bg_folder"},
	}
	plan := Reconcile(found, func(id string) bool { return id == "bg_live" })
	require.Equal(t, []Found{found[1], found[3]}, plan.Remove)
	require.Equal(t, []Found{found[2]}, plan.Kept)
}
