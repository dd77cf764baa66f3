package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// The npm tarball holds the plugin, the .wasm and the config file's schema, and works once installed somewhere else: a
// task launched through the installed copy completes in real OpenCode.
func TestPackedTarballWorksInstalled(t *testing.T) {
	root := ocserve.RepoRoot(t)
	ocserve.PluginSpec(t) // dist/ must be built: npm pack's prepack would otherwise run make
	tmp := t.TempDir()

	pack := exec.Command("npm", "pack", "--ignore-scripts", "--json", "--pack-destination", tmp)
	pack.Dir = root
	out, err := pack.Output()
	require.NoError(t, err, "npm pack")
	var files []string
	for _, line := range strings.Split(string(out), "\n") {
		if s := strings.TrimSpace(line); strings.HasPrefix(s, `"path": "`) {
			files = append(files, strings.TrimSuffix(strings.TrimPrefix(s, `"path": "`), `",`))
		}
	}
	sort.Strings(files)
	require.Equal(t, []string{"ABI.md", "README.md", "dist/asyncagents-cli.js", "dist/asyncagents-tui.js", "dist/asyncagents-worker.js", "dist/asyncagents.js", "dist/asyncagents.schema.json", "dist/asyncagents.wasm", "dist/dashboard.html", "docs/configuration.md", "docs/usage.md", "package.json"}, files, "the README's guides come with it")
	tarballs, _ := filepath.Glob(filepath.Join(tmp, "asyncagents-*.tgz"))
	require.Len(t, tarballs, 1)
	install := installTarball(t, tarballs[0])
	installed := filepath.Join(install, "dist", "asyncagents.js")
	require.FileExists(t, installed)
	require.FileExists(t, filepath.Join(install, "dist", "asyncagents.schema.json"))
	require.FileExists(t, filepath.Join(install, "dist", "dashboard.html"))

	model := mockmodel.Start(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD packed":
			return mockmodel.Reply{Text: "packed result"}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "GO":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Packed job", "CHILD packed", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	})
	oc := ocserve.Start(t, ocserve.Options{ModelURL: model.URL(), Plugins: []string{"file://" + installed}})
	e := &env{t: t, model: model, oc: oc}
	parent := e.prompt("GO")
	e.eventually("the notice from the installed plugin", 60*time.Second, func() bool { return len(e.notices(parent)) == 1 })
	require.Contains(t, e.notices(parent)[0].hidden, "<task_result>\npacked result\n</task_result>")
	require.Contains(t, oc.Logs(), "asyncagents: core loaded (worker)", "the installed package runs its core in its Worker")
}

// installTarball installs the npm tarball into a fresh directory, as a user's project or
// OpenCode's cache would, and returns the installed package's directory.
func installTarball(t *testing.T, tarball string) string {
	install := filepath.Join(t.TempDir(), "elsewhere")
	require.NoError(t, os.MkdirAll(install, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(install, "package.json"), []byte(`{"name":"elsewhere","private":true}`), 0o644))
	npm := exec.Command("npm", "install", "--no-audit", "--no-fund", "--ignore-scripts", tarball)
	npm.Dir = install
	msg, err := npm.CombinedOutput()
	require.NoError(t, err, "npm install: %s", msg)
	return filepath.Join(install, "node_modules", "asyncagents")
}

// packTarball packs the checkout as npm would publish it and returns the tarball.
func packTarball(t *testing.T) string {
	root := ocserve.RepoRoot(t)
	ocserve.PluginSpec(t) // dist/ must be built: npm pack's prepack would otherwise run make
	tmp := t.TempDir()
	pack := exec.Command("npm", "pack", "--ignore-scripts", "--pack-destination", tmp)
	pack.Dir = root
	out, err := pack.CombinedOutput()
	require.NoError(t, err, "npm pack: %s", out)
	tarballs, _ := filepath.Glob(filepath.Join(tmp, "asyncagents-*.tgz"))
	require.Len(t, tarballs, 1)
	return tarballs[0]
}

// The TUI module of the installed package, named in tui.json by the package (its exports["./tui"]),
// draws the section in the real TUI: outside a checkout, where OpenCode transforms nothing.
func TestPackedTUIModuleWorksInstalled(t *testing.T) {
	pkg := installTarball(t, packTarball(t))
	tm := startTmux(t)
	model := mockmodel.Start(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case strings.HasPrefix(req.LastUser, "CHILD "):
			return mockmodel.Reply{Text: "done", Delay: 20 * time.Second}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "GO":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Packed survey", "CHILD p", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	})
	tuiJSON, err := json.Marshal(map[string]any{"plugin": []string{"file://" + pkg}})
	require.NoError(t, err)
	oc := ocserve.StartTUI(t, ocserve.Options{ModelURL: model.URL(), Plugins: []string{"file://" + filepath.Join(pkg, "dist", "asyncagents.js")},
		Files: map[string]string{".opencode/tui.json": string(tuiJSON)}}, tm.socket)
	e := &env{t: t, model: model, oc: oc}
	e.eventually("the TUI's prompt", 60*time.Second, func() bool { return strings.Contains(tm.screen(oc.Pane), "Ask anything") })
	tm.typeLine(oc.Pane, "GO")
	e.eventually("the installed module's section", 60*time.Second, func() bool {
		s := tm.screen(oc.Pane)
		return strings.Contains(s, "Background tasks") && strings.Contains(s, "● Packed survey")
	})
}
