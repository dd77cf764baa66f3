package e2e

import (
	"bytes"
	"context"
	"errors"
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
// own; it returns stdout, stderr and the exit code.
func cliRun(t *testing.T, home string, argv ...string) (stdout, stderr string, code int) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_DATA_HOME=", "XDG_CONFIG_HOME=", "PATH=/usr/bin:/bin")
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

// Both CLIs, the Go one and the npm package's under Bun, read a command line the same way (the
// core reads it): each command's --help, the version, a bad argument or flag named for what it
// is, with the command's usage and exit 2; and doctor's exit 1 when the plugin cannot run here.
func TestBothCLIsReadACommandLineAlike(t *testing.T) {
	root := ocserve.RepoRoot(t)
	ocserve.PluginSpec(t) // dist/ built
	dist := filepath.Join(root, "dist")
	clis := map[string][]string{
		"go":  {filepath.Join(dist, "asyncagents"), "--wasm", filepath.Join(dist, "asyncagents.wasm")},
		"npm": {filepath.Join(root, "node_modules", ".bin", "bun"), filepath.Join(dist, "asyncagents-cli.js")},
	}
	home := t.TempDir()
	project := filepath.Join(home, "project")
	require.NoError(t, os.MkdirAll(project, 0o755))
	cases := []struct {
		args     []string
		code     int
		out, err string
	}{
		{[]string{"ls", "--help"}, 0, "usage: asyncagents ls [flags]\n", ""},
		{[]string{"--version"}, 0, "asyncagents 0.1.0\n", ""},
		{[]string{"ls", "extra"}, 2, "", "asyncagents ls: \"extra\" is not a flag: ls takes no arguments\nusage: asyncagents ls"},
		{[]string{"serve", "--port", "http"}, 2, "", "asyncagents serve: --port: \"http\" is not a port number (1 to 65535)"},
		{[]string{"frob"}, 2, "", "asyncagents: unknown command \"frob\"\nusage: asyncagents <command> [flags]"},
		{[]string{"doctor", "--project", project}, 1, "plugin server: none running for this project", ""},
		{[]string{"ls", "--project", project}, 0, "No background tasks found\n", ""},
	}
	for name, cli := range clis {
		for _, tc := range cases {
			argv := append([]string{}, cli[0])
			if len(tc.args) > 0 && tc.args[0] != "--version" && tc.args[0] != "frob" && name == "go" {
				// The Go CLI takes the core as a flag of the command.
				argv = append(argv, tc.args[0])
				argv = append(argv, cli[1:]...)
				argv = append(argv, tc.args[1:]...)
			} else {
				argv = append(argv, cli[1:]...)
				if name == "go" {
					argv = argv[:1]
				}
				argv = append(argv, tc.args...)
			}
			out, errOut, code := cliRun(t, home, argv...)
			what := name + " " + strings.Join(tc.args, " ")
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
		}
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
			out, errOut, code := cliRun(t, home, d...)
			what := dname + " doctor, " + name + " serve"
			require.Equal(t, 1, code, "%s: %s%s", what, out, errOut)
			require.Contains(t, out, "asyncagents serve (read-only, the history only: not the plugin): "+url, what)
			require.Contains(t, out, "plugin server: none running for this project", what)
		}
		stop()
	}
}
