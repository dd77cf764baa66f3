package e2e

import (
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// The project the isolation tests run in: committed files, then uncommitted edits made after
// OpenCode started (parentEdit), so every child starts from a tree that differs from HEAD.
var isolatedFiles = map[string]string{
	"shared.txt": "line one\nline two\nline three\n",
	"notes.txt":  "committed notes\n",
	"other.txt":  "other\n",
}

const parentEdit = "the parent's uncommitted edit\n"

// startIsolated is start with the isolation project and the parent's uncommitted edit in notes.txt.
func startIsolated(t *testing.T, script mockmodel.Script, extra ...string) *env {
	t.Helper()
	model := mockmodel.Start(t, script)
	oc := ocserve.Start(t, ocserve.Options{ModelURL: model.URL(), Plugins: []string{ocserve.PluginSpec(t)}, Env: extra, Files: isolatedFiles})
	require.NoError(t, os.WriteFile(filepath.Join(oc.Dir, "notes.txt"), []byte(parentEdit), 0o644))
	return &env{t: t, model: model, oc: oc}
}

// isolatedCall launches an isolated task.
func isolatedCall(desc, prompt string) mockmodel.ToolCall {
	c := taskCall(desc, prompt, "general")
	c.Args["isolation"] = "worktree"
	return c
}

// childEdit is the mock child's bash call: it writes text as shared.txt's second line, in
// whatever directory its tools run in.
func childEdit(text string) mockmodel.Reply {
	return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "bash", Args: map[string]any{
		"command":     "printf 'line one\\n" + text + "\\nline three\\n' > shared.txt",
		"description": "edit shared.txt"}}}}
}

// gitIn runs git in dir and returns its output, trimmed; a failure fails the test.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	require.NoError(t, err, "git %s: %s", strings.Join(args, " "), out)
	return strings.TrimSpace(string(out))
}

// ourBranches lists the asyncagents/ branches of the project.
func ourBranches(t *testing.T, dir string) []string {
	out := gitIn(t, dir, "for-each-ref", "--format=%(refname:short)", "refs/heads/asyncagents/")
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// linkedWorktrees lists the project's git worktrees other than the project itself.
func linkedWorktrees(t *testing.T, dir string) []string {
	var out []string
	for _, l := range strings.Split(gitIn(t, dir, "worktree", "list", "--porcelain"), "\n") {
		if p, ok := strings.CutPrefix(l, "worktree "); ok && p != realDir(dir) {
			out = append(out, p)
		}
	}
	return out
}

// worktreeFolders lists every folder under the plugin's worktrees folder (all projects).
func worktreeFolders(oc *ocserve.Server) []string {
	found, _ := filepath.Glob(filepath.Join(storageOf(oc).Dir, "worktrees", "*", "*"))
	return found
}

func realDir(dir string) string {
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return r
	}
	return dir
}

// treeBytes is every file of the project's working tree (not .git, not the seeded .opencode)
// with its bytes: two equal results mean the tree did not change, byte for byte.
func treeBytes(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == ".opencode") {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			out[rel] = base64.StdEncoding.EncodeToString(b)
		}
		return nil
	}))
	return out
}

// toolResult is the text a parent's call of tool came back with (its output, or its error).
func (e *env) toolResults(parent, tool string) []string {
	var out []string
	for _, p := range e.toolParts(parent, tool) {
		if p.State.Status == "completed" {
			out = append(out, p.State.Output)
		} else if p.State.Status == "error" {
			out = append(out, "ERROR: "+p.State.Error)
		}
	}
	return out
}
