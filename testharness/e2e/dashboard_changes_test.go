package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/browser"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// The Changes card of an isolated task's page, in a browser, against the plugin in a real
// opencode serve: the branch, the file with its + and −, the diff, the Merge button's confirm,
// then the state "merged" and the core's note, and the parent's tree holding the child's edit
// (testharness/browser/changes.mjs).
func TestDashboardChangesAndMerge(t *testing.T) {
	e, sj := startServing(t, isolationScript(map[string][]mockmodel.ToolCall{"LAUNCH ONE": {isolatedCall("Edit A", "CHILD edit A")}}),
		ocserve.Options{Config: map[string]any{"plugin": []any{[]any{ocserve.PluginSpec(t), map[string]any{}}}}, Files: isolatedFiles})
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	shared := filepath.Join(e.oc.Dir, "shared.txt")
	var parent string
	lines := browser.Script(t, root, "changes.mjs", 4*time.Minute, func(line string) {
		switch {
		case line == "ready":
			parent = e.prompt("LAUNCH ONE")
		case strings.HasPrefix(line, "branch "):
			// The card shows the child's changes; the parent's tree does not hold them yet.
			if got := readFile(t, shared); got != isolatedFiles["shared.txt"] {
				t.Errorf("shared.txt changed before the merge: %q", got)
			}
		}
	}, "DASH_URL="+sj.URL, "DASH_TOKEN="+sj.Token, "DASH_SHOTS="+filepath.Join(root, "dist", "screenshots"))
	require.Contains(t, lines, "merged")

	id := e.launchedTasks(parent, 1)[0]
	require.Contains(t, lines, "branch asyncagents/"+id, "the card names the task's branch")
	got, err := os.ReadFile(shared)
	require.NoError(t, err)
	require.Equal(t, "line one\nedited by A\nline three\n", string(got), "the parent's tree holds the child's edit")
	require.Empty(t, gitIn(t, e.oc.Dir, "diff", "--cached", "--name-only"), "the merge applies to the working tree only")
	require.Contains(t, ourBranches(t, e.oc.Dir), "asyncagents/"+id, "the branch is kept")
	e.eventually("the worktree's removal", 30*time.Second, func() bool { return len(linkedWorktrees(t, e.oc.Dir)) == 0 })
}
