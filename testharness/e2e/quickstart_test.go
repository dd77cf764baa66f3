package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// The README's quick start, as a new user follows it: the packed tarball named by its file spec
// in opencode.json and tui.json, and installed into the project for the CLI. A fan-out runs in
// real OpenCode; then `npx asyncagents doctor` names the plugin's server, the config files and
// OpenCode's version, `npx asyncagents ls` prints the table the Go CLI prints, `dashboard
// --print` a one-time link, and `serve` the read-only API over the two tasks.
func TestQuickStartInstallAndCLI(t *testing.T) {
	tarball := packTarball(t)
	spec := "asyncagents@file:" + tarball
	model := mockmodel.Start(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case strings.HasPrefix(req.LastUser, "CHILD "):
			return mockmodel.Reply{Text: "result of " + req.LastUser}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "GO":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Quick one", "CHILD one", "general"), taskCall("Quick two", "CHILD two", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	})
	oc := ocserve.Start(t, ocserve.Options{ModelURL: model.URL(), Plugins: []string{spec}, Files: map[string]string{
		"package.json":       `{"name":"quick-start","private":true}`,
		".opencode/tui.json": `{"plugin": ["` + spec + `"]}`,
	}})
	e := &env{t: t, model: model, oc: oc}
	parent := e.prompt("GO")
	e.eventually("both tasks' notices", 90*time.Second, func() bool { return len(e.notices(parent)) == 2 })

	// The CLI of the package installed in the project, run as a user runs it, in the project,
	// with OpenCode's data and config homes and OpenCode on the PATH.
	npm := exec.Command("npm", "install", "--no-audit", "--no-fund", "--ignore-scripts", "--offline", tarball)
	npm.Dir = oc.Dir
	msg, err := npm.CombinedOutput()
	require.NoError(t, err, "npm install: %s", msg)
	cliEnv := append(os.Environ(), "HOME="+oc.Home, "XDG_DATA_HOME="+filepath.Join(oc.Home, ".local", "share"),
		"XDG_CONFIG_HOME="+filepath.Join(oc.Home, ".config"), "npm_config_offline=true", "npm_config_update_notifier=false",
		"PATH="+filepath.Dir(ocserve.Binary(t))+string(os.PathListSeparator)+os.Getenv("PATH"))
	run := func(name string, args ...string) string {
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = oc.Dir, cliEnv
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, "%s %v: %s%s", name, args, out, stderr.String())
		return string(out)
	}

	doctor := run("npx", "asyncagents", "doctor")
	project, err := filepath.EvalSymlinks(oc.Dir)
	require.NoError(t, err)
	require.Contains(t, doctor, "asyncagents doctor: project "+project)
	require.Regexp(t, `plugin server: http://127\.0\.0\.1:\d+ \(pid \d+, started [^)]+\) answers`, doctor)
	require.Contains(t, doctor, filepath.Join(project, "opencode.json")+`: plugin "`+spec+`"`)
	require.Contains(t, doctor, filepath.Join(project, ".opencode", "tui.json")+`: plugin "`+spec+`"`)
	require.Contains(t, doctor, "config file: none")
	require.Regexp(t, `OpenCode: 1\.\d+\.\d+`, doctor)
	require.NotContains(t, doctor, "no file names asyncagents")
	goDoctor := run(filepath.Join(ocserve.RepoRoot(t), "dist", "asyncagents"), "doctor", "--wasm", filepath.Join(ocserve.RepoRoot(t), "dist", "asyncagents.wasm"))
	require.Equal(t, goDoctor, doctor, "both CLIs print the core's report")

	ls := run("npx", "asyncagents", "ls")
	require.Contains(t, ls, "Quick one")
	require.Contains(t, ls, "Quick two")
	require.Equal(t, 2, strings.Count(ls, " completed "), ls)
	goCLI := run(filepath.Join(ocserve.RepoRoot(t), "dist", "asyncagents"), "ls", "--wasm", filepath.Join(ocserve.RepoRoot(t), "dist", "asyncagents.wasm"))
	require.Equal(t, goCLI, ls, "the npm CLI prints what the Go CLI prints")

	require.Regexp(t, `^http://127\.0\.0\.1:\d+/\?code=\w+\n$`, run("npx", "asyncagents", "dashboard", "--print"))

	// serve: the read-only status API over the history, from the installed package.
	port := freeTCPPort(t)
	serve := exec.Command("npx", "asyncagents", "serve", "--port", strconv.Itoa(port))
	serve.Dir, serve.Env = oc.Dir, cliEnv
	// Its own process group: npm exec does not pass a signal on to the node it runs.
	serve.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := serve.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, serve.Start())
	t.Cleanup(func() { stopGroup(serve) })
	lines := bufio.NewScanner(stdout)
	require.True(t, lines.Scan(), "serve's first line")
	require.Equal(t, fmt.Sprintf("asyncagents: serving 2 tasks of %s at http://127.0.0.1:%d (read-only)", project, port), lines.Text())
	require.True(t, lines.Scan())
	token := strings.TrimPrefix(lines.Text(), "token: ")
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/v1/tasks?status=completed", port), nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	require.Equal(t, http.StatusOK, res.StatusCode, "%s", body)
	require.Contains(t, string(body), `"total":2`)
}

// With the TUI module in tui.json but the server part not in opencode.json (the install mistake
// that otherwise passes in silence), the sidebar's section says there is no server and names the
// fix.
func TestTUIModuleWithoutServerNamesTheFix(t *testing.T) {
	tm := startTmux(t)
	model := mockmodel.Start(t, func(req mockmodel.Request) mockmodel.Reply { return mockmodel.Reply{Text: "ok"} })
	tui := "file://" + filepath.Join(ocserve.RepoRoot(t), "dist", "asyncagents-tui.js")
	oc := ocserve.StartTUI(t, ocserve.Options{ModelURL: model.URL(), Plugins: []string{},
		Files: map[string]string{".opencode/tui.json": `{"plugin": ["` + tui + `"]}`}}, tm.socket)
	e := &env{t: t, model: model, oc: oc}
	e.eventually("the TUI's prompt", 60*time.Second, func() bool { return strings.Contains(tm.screen(oc.Pane), "Ask anything") })
	tm.typeLine(oc.Pane, "hello")
	e.eventually("the section saying there is no server", 90*time.Second, func() bool {
		s := tm.screen(oc.Pane)
		return strings.Contains(s, "Background tasks") && strings.Contains(s, "No asyncagents server")
	})
	require.NotContains(t, oc.Logs(), "asyncagents: core loaded", "no server part was loaded")
}
