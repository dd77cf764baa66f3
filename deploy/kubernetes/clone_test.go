package kubernetes

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// git runs git in dir and returns its output, trimmed.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// runClone runs the init container's own script (worker.yaml), with its env and the given
// repository, ref and directory in place of the manifest's.
func runClone(t *testing.T, url, ref, dir string) string {
	t.Helper()
	init := decodeAll(t).sets[0].Spec.Template.Spec.InitContainers[0]
	require.Equal(t, []string{"sh", "-c"}, init.Command)
	cmd := exec.Command("sh", "-c", init.Args[0])
	cmd.Env = os.Environ()
	for _, e := range init.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	cmd.Env = append(cmd.Env, "REPO_URL="+url, "REPO_REF="+ref, "REPO_DIR="+dir, "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the init script failed: %s", out)
	return string(out)
}

// The init container puts the repository at the ref into an empty volume; run again, as after a
// pod's restart with its volume kept, it does not fail on the clone that is there: a clean tree
// moves to the ref's new commit, a tree with uncommitted work is kept as it is.
func TestTheInitContainerClonesAtTheRefAndSurvivesARestart(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	origin := t.TempDir()
	git(t, origin, "init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(origin, "a.txt"), []byte("one\n"), 0o644))
	git(t, origin, "add", ".")
	git(t, origin, "commit", "-q", "-m", "one")
	first := git(t, origin, "rev-parse", "HEAD")
	git(t, origin, "checkout", "-q", "-b", "other")
	require.NoError(t, os.WriteFile(filepath.Join(origin, "b.txt"), []byte("other\n"), 0o644))
	git(t, origin, "add", ".")
	git(t, origin, "commit", "-q", "-m", "other")
	git(t, origin, "checkout", "-q", "main")
	url := "file://" + origin

	repo := filepath.Join(t.TempDir(), "repo")
	out := runClone(t, url, "main", repo)
	require.Equal(t, first, git(t, repo, "rev-parse", "HEAD"))
	require.Contains(t, out, repo+" is at main")
	require.NoFileExists(t, filepath.Join(repo, "b.txt"), "main, not the other branch")
	require.NotContains(t, git(t, repo, "config", "--list", "--local"), origin, "the URL is not kept as a remote")

	git(t, origin, "commit", "-q", "--allow-empty", "-m", "two")
	runClone(t, url, "main", repo) // the pod restarts; its volume is kept
	require.Equal(t, git(t, origin, "rev-parse", "HEAD"), git(t, repo, "rev-parse", "HEAD"), "a clean tree moves to the ref")

	require.NoError(t, os.WriteFile(filepath.Join(repo, "a.txt"), []byte("a task's edit\n"), 0o644))
	out = runClone(t, url, "other", repo)
	require.Contains(t, out, "kept as it is")
	got, err := os.ReadFile(filepath.Join(repo, "a.txt"))
	require.NoError(t, err)
	require.Equal(t, "a task's edit\n", string(got), "uncommitted work is kept")
}
