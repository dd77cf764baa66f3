// Package browser holds the web dashboard's tests in a real browser: node scripts that drive a
// headless Chromium (lib.mjs) against servers the Go tests start (serve_test.go here, and
// testharness/e2e/dashboard_test.go against the plugin in a real opencode serve).
package browser

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Script runs the browser script name of this directory (root is the checkout's root) with env,
// bounded by timeout. Each line it prints goes to onLine as it comes, so a test can act when the
// page is ready (the scripts print "ready"); a script that fails fails the test with its output.
// It returns every line printed.
func Script(t *testing.T, root, name string, timeout time.Duration, onLine func(string), env ...string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(root, "testharness", "browser", name))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var out []string
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		out = append(out, lines.Text())
		if onLine != nil {
			onLine(lines.Text())
		}
	}
	require.NoError(t, cmd.Wait(), "%s failed:\n%s\n%s", name, strings.Join(out, "\n"), stderr.String())
	t.Logf("%s: %s", name, strings.Join(out, "; "))
	return out
}
