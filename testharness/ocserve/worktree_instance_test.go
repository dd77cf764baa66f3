package ocserve

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
)

// spyPlugin logs, per plugin instance, the directory OpenCode loaded it for and every event its
// event hook hears, one line each: "init <dir>" and "event <dir> <type> <sessionID>".
const spyPlugin = `import { appendFileSync } from "node:fs";
export const Spy = async ({ directory }) => {
  const log = (line) => appendFileSync(process.env.SPY_LOG, line + "\n");
  log("init " + directory);
  return { event: async ({ event }) => {
    const p = event.properties ?? {};
    log("event " + directory + " " + event.type + " " + (p.sessionID ?? p.info?.sessionID ?? p.info?.id ?? ""));
  } };
};
`

// What OpenCode 1.18 does with a session created in a git worktree of the project that lies
// outside the project's folder (?directory=): the facts the isolated tasks of #35 rest on
// (docs/rationale/worktrees.md, "What OpenCode does with a worktree").
func TestWorktreeInstance(t *testing.T) {
	ctx := testCtx(t, 150*time.Second)
	m := mockmodel.Start(t, func(r mockmodel.Request) mockmodel.Reply {
		if strings.Contains(r.LastUser, "EDIT") && len(r.Messages) > 0 && r.Messages[len(r.Messages)-1].Role == "user" {
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "bash", Args: map[string]any{
				"command": "pwd > where.txt && echo child > edited.txt", "description": "edit"}}}}
		}
		if strings.Contains(r.LastUser, "SLOW") {
			return mockmodel.Reply{Text: "slow", Delay: 20 * time.Second}
		}
		return mockmodel.Reply{Text: "done"}
	})
	tmp := t.TempDir()
	spy := filepath.Join(tmp, "spy.js")
	spyLog := filepath.Join(tmp, "spy.log")
	require.NoError(t, os.WriteFile(spy, []byte(spyPlugin), 0o644))
	s := Start(t, Options{ModelURL: m.URL(), Plugins: []string{"file://" + spy}, Env: []string{"SPY_LOG=" + spyLog}})

	wt := filepath.Join(tmp, "worktrees", "bg_1")
	out, err := exec.Command("git", "-C", s.Dir, "worktree", "add", "-q", "-b", "asyncagents/bg_1", wt, "HEAD").CombinedOutput()
	require.NoError(t, err, string(out))
	wt, _ = filepath.EvalSymlinks(wt)
	// Without this, OpenCode installs the worktree's .opencode dependencies (git ignores
	// node_modules, so the worktree has none) before it loads any plugin: offline it waited 21 s
	// for npm to fail. The executor links the project's (plugin-js/worktree.ts).
	require.NoError(t, os.Symlink(filepath.Join(s.Dir, ".opencode", "node_modules"), filepath.Join(wt, ".opencode", "node_modules")))
	in := "?directory=" + url.QueryEscape(wt)

	parent, err := s.CreateSession(ctx, "parent")
	require.NoError(t, err)
	var child SessionInfo
	require.NoError(t, s.Do(ctx, http.MethodPost, "/session"+in, map[string]any{"parentID": parent, "title": "child"}, &child))
	assert.Equal(t, wt, child.Directory, "the query beats the x-opencode-directory header: the child is the worktree's")
	assert.Equal(t, parent, child.ParentID, "parentID is kept across directories")
	var root SessionInfo
	require.NoError(t, s.Do(ctx, http.MethodGet, "/session/"+parent, nil, &root))
	assert.Equal(t, root.ProjectID, child.ProjectID, "a worktree of the repository is the same OpenCode project")
	kids, err := s.Children(ctx, parent)
	require.NoError(t, err)
	require.Len(t, kids, 1, "the parent's instance lists the child in the worktree as its child")

	// The child's tools run in the worktree.
	body := PromptBody{Parts: []TextPart{{Type: "text", Text: "EDIT please"}}}
	require.NoError(t, s.Do(ctx, http.MethodPost, "/session/"+child.ID+"/prompt_async"+in, body, nil))
	require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(wt, "edited.txt")); return err == nil }, 60*time.Second, 200*time.Millisecond)
	where, _ := os.ReadFile(filepath.Join(wt, "where.txt"))
	assert.Equal(t, wt, strings.TrimSpace(string(where)), "bash ran in the worktree")
	assert.NoFileExists(t, filepath.Join(s.Dir, "edited.txt"), "nothing reached the parent's tree")

	// Messages and the session itself read from either instance (one project, one store).
	var msgs []Message
	require.NoError(t, s.Do(ctx, http.MethodGet, "/session/"+child.ID+"/message", nil, &msgs))
	assert.NotEmpty(t, msgs, "the parent's instance reads the child's messages")

	// Status is per instance: a busy child in the worktree shows only in its own.
	require.NoError(t, s.Do(ctx, http.MethodPost, "/session/"+child.ID+"/prompt_async"+in, PromptBody{Parts: []TextPart{{Type: "text", Text: "SLOW"}}}, nil))
	var inWT map[string]SessionStatus
	require.Eventually(t, func() bool {
		inWT = nil
		return s.Do(ctx, http.MethodGet, "/session/status"+in, nil, &inWT) == nil && inWT[child.ID].Type == "busy"
	}, 20*time.Second, 200*time.Millisecond)
	inProject, err := s.StatusFull(ctx)
	require.NoError(t, err)
	assert.NotContains(t, inProject, child.ID, "the project's instance does not list the worktree's busy child")

	// Abort reaches the worktree's run even from the project's instance (the model's answer is
	// 20 s away, so only the abort ends the run within the bound).
	require.NoError(t, s.Abort(ctx, child.ID))
	assert.True(t, waitNotBusy(ctx, s, in, child.ID, 10*time.Second), "abort without ?directory= stops the worktree child")

	// A permission request of a worktree child is pending in the worktree's instance only, and
	// its reply must go there.
	var asking SessionInfo
	rules := []map[string]any{{"permission": "bash", "pattern": "*", "action": "ask"}}
	require.NoError(t, s.Do(ctx, http.MethodPost, "/session"+in, map[string]any{"parentID": parent, "title": "asks", "permission": rules}, &asking))
	require.NoError(t, os.Remove(filepath.Join(wt, "edited.txt")))
	require.NoError(t, s.Do(ctx, http.MethodPost, "/session/"+asking.ID+"/prompt_async"+in, body, nil))
	type pending struct{ ID, SessionID string }
	var inWTPending, inProjectPending []pending
	require.Eventually(t, func() bool {
		inWTPending = nil
		return s.Do(ctx, http.MethodGet, "/permission"+in, nil, &inWTPending) == nil && len(inWTPending) == 1
	}, 30*time.Second, 200*time.Millisecond, "the worktree's instance lists the request")
	require.NoError(t, s.Do(ctx, http.MethodGet, "/permission", nil, &inProjectPending))
	assert.Empty(t, inProjectPending, "the project's instance does not list it")
	reply := map[string]any{"reply": "once"}
	errProject := s.Do(ctx, http.MethodPost, "/permission/"+inWTPending[0].ID+"/reply", reply, nil)
	var notFound *HTTPError
	require.ErrorAs(t, errProject, &notFound, "a reply sent to the project's instance does not reach the request")
	assert.Equal(t, http.StatusNotFound, notFound.Status, notFound.Body)
	answered := func(bound time.Duration) bool {
		deadline := time.Now().Add(bound)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(filepath.Join(wt, "edited.txt")); err == nil {
				return true
			}
			time.Sleep(200 * time.Millisecond)
		}
		return false
	}
	require.NoError(t, s.Do(ctx, http.MethodPost, "/permission/"+inWTPending[0].ID+"/reply"+in, reply, nil))
	assert.True(t, answered(30*time.Second), "a reply with ?directory= does")

	// Which plugin instances ran, and whose event hook heard the child.
	b, _ := os.ReadFile(spyLog)
	log := string(b)
	project, _ := filepath.EvalSymlinks(s.Dir)
	assert.Contains(t, log, "init "+project+"\n")
	assert.Contains(t, log, "init "+wt+"\n", "OpenCode loads the plugin again for the worktree's instance")
	assert.False(t, containsEventOf(log, project, child.ID), "the project's event hook hears none of the child's events")
	assert.True(t, containsEventOf(log, wt, child.ID), "the worktree instance's event hook hears them")
	if t.Failed() {
		t.Logf("spy log:\n%s", tailLines(log, 40))
	}
}

func waitNotBusy(ctx context.Context, s *Server, in, id string, bound time.Duration) bool {
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) {
		var st map[string]SessionStatus
		if s.Do(ctx, http.MethodGet, "/session/status"+in, nil, &st) == nil && st[id].Type == "" {
			return true
		}
		time.Sleep(200 * time.Millisecond)
	}
	return false
}

func containsEventOf(log, dir, id string) bool {
	for _, l := range strings.Split(log, "\n") {
		if strings.HasPrefix(l, "event "+dir+" ") && strings.HasSuffix(l, " "+id) {
			return true
		}
	}
	return false
}

func tailLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
