package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// cliRun runs a CLI (argv: the program, then its arguments) bounded at 60 s, in a home of its
// own, env added to its environment; it returns stdout, stderr and the exit code.
func cliRun(t *testing.T, home string, env []string, argv ...string) (stdout, stderr string, code int) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(append(os.Environ(), "HOME="+home, "XDG_DATA_HOME=", "XDG_CONFIG_HOME=", "ASYNCAGENTS_API_PORT=", "ASYNCAGENTS_WASM=", "PATH=/usr/bin:/bin:/usr/local/bin"), env...)
	cmd.WaitDelay = 5 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("%v: %v", argv, err)
	}
	return out.String(), errb.String(), code
}

// Both CLIs, the Go one and the npm package's (under Bun and under Node), read a command line the
// same way, the core reading it: each command's --help, the version, a bad argument or flag named
// for what it is with the command's usage and exit 2, a bad $ASYNCAGENTS_API_PORT for serve, and
// doctor's exit 1 when the plugin cannot run here. Their outputs are compared byte for byte.
func TestBothCLIsReadACommandLineAlike(t *testing.T) {
	root := ocserve.RepoRoot(t)
	ocserve.PluginSpec(t) // dist/ built
	dist := filepath.Join(root, "dist")
	clis := map[string][]string{
		"go":        {filepath.Join(dist, "asyncagents")},
		"npm, bun":  {filepath.Join(root, "node_modules", ".bin", "bun"), filepath.Join(dist, "asyncagents-cli.js")},
		"npm, node": {"node", filepath.Join(dist, "asyncagents-cli.js")},
	}
	home := t.TempDir()
	project := filepath.Join(home, "project")
	require.NoError(t, os.MkdirAll(project, 0o755))
	wasm := filepath.Join(dist, "asyncagents.wasm")
	cases := []struct {
		args     []string
		env      string // ASYNCAGENTS_API_PORT
		code     int
		out, err string
	}{
		{[]string{"ls", "--help"}, "", 0, "usage: asyncagents ls [flags]\n", ""},
		{[]string{"--version"}, "", 0, "asyncagents 0.1.0\n", ""},
		{[]string{"ls", "extra"}, "", 2, "", "asyncagents ls: \"extra\" is not a flag: ls takes no arguments\nusage: asyncagents ls"},
		{[]string{"serve", "--port", "http"}, "", 2, "", "asyncagents serve: --port: \"http\" is not a port number (1 to 65526: it and the nine after it are tried)"},
		{[]string{"serve"}, "abc", 2, "", "asyncagents serve: $ASYNCAGENTS_API_PORT: \"abc\" is not a port number"},
		{[]string{"frob"}, "", 2, "", "asyncagents: unknown command \"frob\"\nusage: asyncagents <command> [flags]"},
		{[]string{"doctor", "--project", project}, "", 1, "plugin server: none running for this project", ""},
		{[]string{"ls", "--project", project, "--wasm", wasm, "--"}, "", 0, "No background tasks found\n", ""},
	}
	for _, tc := range cases {
		var first string
		var firstOut [3]string
		for _, name := range []string{"go", "npm, bun", "npm, node"} {
			argv := append(append([]string{}, clis[name]...), tc.args...)
			out, errOut, code := cliRun(t, home, []string{"ASYNCAGENTS_API_PORT=" + tc.env}, argv...)
			what := name + ": " + strings.Join(tc.args, " ")
			require.Equal(t, tc.code, code, "%s\nstdout: %s\nstderr: %s", what, out, errOut)
			if tc.out != "" {
				require.Contains(t, out, tc.out, what)
			}
			if tc.err != "" {
				require.Contains(t, errOut, tc.err, what)
				require.Empty(t, out, what)
			} else {
				require.Empty(t, errOut, what)
			}
			if first == "" {
				first, firstOut = name, [3]string{out, errOut, fmt.Sprint(code)}
				continue
			}
			require.Equal(t, firstOut, [3]string{out, errOut, fmt.Sprint(code)}, "%s prints what %s prints", what, first)
		}
	}

	// A working directory that is gone is named, not a stack trace. (Bun itself refuses to start
	// there, in its own words.)
	for _, name := range []string{"go", "npm, node"} {
		cli := clis[name]
		gone := filepath.Join(home, "gone")
		require.NoError(t, os.MkdirAll(gone, 0o755))
		argv := append([]string{"sh", "-c", `cd "$0" && rmdir "$0" && exec "$@"`, gone}, append(append([]string{}, cli...), "ls")...)
		out, errOut, code := cliRun(t, home, nil, argv...)
		require.Equal(t, 1, code, "%s: %s%s", name, out, errOut)
		require.True(t, strings.HasPrefix(errOut, "asyncagents ls: "), "%s: %s", name, errOut)
		require.Equal(t, 1, strings.Count(errOut, "\n"), "%s: one line, no stack: %s", name, errOut)
	}
}

// Either CLI's `serve` (a read-only view of the history) is not taken for the plugin: doctor, from
// either CLI, names it for what it is and still says no plugin runs (exit 1). The npm CLI's serve
// once wrote a server file that did not say read-only.
func TestDoctorTellsAReadOnlyServeFromThePlugin(t *testing.T) {
	root := ocserve.RepoRoot(t)
	ocserve.PluginSpec(t)
	dist := filepath.Join(root, "dist")
	bun := filepath.Join(root, "node_modules", ".bin", "bun")
	home := t.TempDir()
	project := filepath.Join(home, "project")
	require.NoError(t, os.MkdirAll(project, 0o755))
	env := append(os.Environ(), "HOME="+home, "XDG_DATA_HOME=", "XDG_CONFIG_HOME=", "PATH=/usr/bin:/bin")
	serves := map[string][]string{
		"go":  {filepath.Join(dist, "asyncagents"), "serve", "--project", project, "--wasm", filepath.Join(dist, "asyncagents.wasm")},
		"npm": {bun, filepath.Join(dist, "asyncagents-cli.js"), "serve", "--project", project},
	}
	doctors := map[string][]string{
		"go":  {filepath.Join(dist, "asyncagents"), "doctor", "--project", project, "--wasm", filepath.Join(dist, "asyncagents.wasm")},
		"npm": {bun, filepath.Join(dist, "asyncagents-cli.js"), "doctor", "--project", project},
	}
	for name, argv := range serves {
		argv = append(argv, "--port", strconv.Itoa(freeTCPPort(t)))
		url, _, _, stop := startServe(t, argv, env)
		for dname, d := range doctors {
			out, errOut, code := cliRun(t, home, nil, d...)
			what := dname + " doctor, " + name + " serve"
			require.Equal(t, 1, code, "%s: %s%s", what, out, errOut)
			require.Contains(t, out, "asyncagents serve (read-only, the history only: not the plugin): "+url, what)
			require.Contains(t, out, "plugin server: none running for this project", what)
		}
		stop()
	}
}
