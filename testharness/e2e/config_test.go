package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// configScript launches one general task on "LAUNCH", answers the child's prompt, and counts
// the child's model calls per model.
func configScript(childCalls map[string]*atomic.Int32) mockmodel.Script {
	return func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD configured":
			if n, ok := childCalls["mock/"+req.Model]; ok {
				n.Add(1)
			}
			return mockmodel.Reply{Text: "configured result"}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "noted"}
		case req.LastUser == "LAUNCH":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Configured job", "CHILD configured", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
}

// An invalid project config file: asyncagents_task fails naming the file and the field, OpenCode's
// log says the same, and nothing is launched.
func TestConfigInvalidProjectFile(t *testing.T) {
	calls := map[string]*atomic.Int32{ocserve.ModelA: {}, ocserve.ModelB: {}}
	e := start(t, configScript(calls))
	// The plugin loads on the first request for the project: the file is there before it.
	file := filepath.Join(e.oc.Dir, ".opencode", "asyncagents.json")
	writeFile(t, file, "{\n  \"agents\": {\n    \"general\": { \"models\": [\""+ocserve.ModelA+"\", 42] }\n  }\n}\n")
	want := `asyncagents: ` + file + `: agents.general.models[1]: must be a "provider/model" string, got 42`

	parent := e.prompt("LAUNCH")
	e.eventually("the launch call to fail", 60*time.Second, func() bool {
		return finishedParts(e.toolParts(parent, "asyncagents_task"))
	})
	part := e.toolParts(parent, "asyncagents_task")[0]
	require.Equal(t, "error", part.State.Status, "output: %s", part.State.Output)
	require.Contains(t, part.State.Error, want)

	// OpenCode's log quotes the message: its inner quotes come escaped.
	e.eventually("the error in OpenCode's log", 15*time.Second, func() bool {
		return strings.Contains(strings.ReplaceAll(e.oc.Logs(), `\"`, `"`), want)
	})
	require.NoError(t, e.oc.WaitIdle(e.ctx(60*time.Second), parent))
	children, err := e.oc.Children(e.ctx(15*time.Second), parent)
	require.NoError(t, err)
	require.Empty(t, children, "no child session")
	require.Zero(t, calls[ocserve.ModelA].Load()+calls[ocserve.ModelB].Load(), "no child prompt")
}

// The global .jsonc (comments, trailing commas) and the project file are layered: the project's
// entry for the agent replaces the global chain, and the child runs on its model.
func TestConfigFilesLayered(t *testing.T) {
	calls := map[string]*atomic.Int32{ocserve.ModelA: {}, ocserve.ModelB: {}}
	e := start(t, configScript(calls))
	// The harness sets XDG_CONFIG_HOME to <home>/.config.
	writeFile(t, filepath.Join(e.oc.Home, ".config", "opencode", "asyncagents.jsonc"),
		"// global\n{\n  \"agents\": {\n    \"general\": { \"models\": [\""+ocserve.ModelA+"\", \""+ocserve.ModelB+"\"], },\n  },\n  /* defaults otherwise */\n}\n")
	writeFile(t, filepath.Join(e.oc.Dir, ".opencode", "asyncagents.jsonc"),
		"{ \"agents\": { \"general\": { \"model\": \""+ocserve.ModelB+"\" } } }\n")

	parent := e.prompt("LAUNCH")
	e.eventually("the notice", 60*time.Second, func() bool { return len(e.notices(parent)) == 1 })
	n := e.notices(parent)[0]
	require.Contains(t, n.hidden, "<task_result>\nconfigured result\n</task_result>")
	require.Equal(t, int32(1), calls[ocserve.ModelB].Load(), "the child ran on the project's model")
	require.Zero(t, calls[ocserve.ModelA].Load(), "the global chain was replaced, not extended")
	require.NotContains(t, e.oc.Logs(), "asyncagents: "+e.oc.Dir)
}

// A wrong type in opencode.json's plugin options gets a config file's message, naming the
// source and the field: the plugin loads, the status API answers, /v1/health says degraded with
// the reason, and asyncagents_task fails with it. Before, the core failed to load on every tool.
func TestConfigWrongTypeInPluginOptions(t *testing.T) {
	calls := map[string]*atomic.Int32{ocserve.ModelA: {}, ocserve.ModelB: {}}
	e, sj := startWithConfig(t, configScript(calls), map[string]any{
		"plugin": []any{[]any{ocserve.PluginSpec(t), map[string]any{"maxResultChars": "big"}}},
	})
	want := `asyncagents: opencode.json (the asyncagents plugin's options): maxResultChars: must be a positive integer, got "big"`
	code, body := apiGet(t, sj.URL+"/v1/health", sj.Token, "")
	require.Equal(t, 200, code, body)
	var h struct{ Status, ConfigError string }
	require.NoError(t, json.Unmarshal([]byte(body), &h))
	require.Equal(t, "degraded", h.Status)
	require.Equal(t, want, h.ConfigError)

	// doctor, from either CLI, names the options in error where they are written, and the
	// running plugin's error with the fix (exit 1). It once said all was well.
	dist := filepath.Join(ocserve.RepoRoot(t), "dist")
	bun := filepath.Join(ocserve.RepoRoot(t), "node_modules", ".bin", "bun")
	for name, argv := range map[string][]string{
		"go":  {filepath.Join(dist, "asyncagents"), "doctor", "--project", e.oc.Dir, "--wasm", filepath.Join(dist, "asyncagents.wasm")},
		"npm": {bun, filepath.Join(dist, "asyncagents-cli.js"), "doctor", "--project", e.oc.Dir},
	} {
		out, errOut, code := cliRun(t, e.oc.Home, []string{"PATH=" + filepath.Dir(ocserve.Binary(t)) + ":/usr/bin:/bin"}, argv...)
		require.Equal(t, 1, code, "%s: %s%s", name, out, errOut)
		require.Contains(t, out, "opencode.json: plugin \""+ocserve.PluginSpec(t)+"\"\n  "+want+"\n", name)
		require.Contains(t, out, "answers\n  it started with a config error, and every launch fails: "+want+"\n", name)
	}

	parent := e.prompt("LAUNCH")
	e.eventually("the launch call to fail", 60*time.Second, func() bool {
		return finishedParts(e.toolParts(parent, "asyncagents_task"))
	})
	part := e.toolParts(parent, "asyncagents_task")[0]
	require.Equal(t, "error", part.State.Status, "output: %s", part.State.Output)
	require.Contains(t, part.State.Error, want)
	require.Zero(t, calls[ocserve.ModelA].Load()+calls[ocserve.ModelB].Load(), "no child prompt")
}
