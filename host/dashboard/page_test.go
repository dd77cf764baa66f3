package dashboard

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPageIsFresh builds the dashboard again into a temporary directory and compares: the
// committed page (and the core's CSP hashes of it) must be what its source builds to. Run
// make dashboard after changing host/dashboard/src.
func TestPageIsFresh(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "node_modules", "esbuild"))
	require.NoError(t, err, "esbuild is not installed: run make deps")
	dir := t.TempDir()
	page, csp := filepath.Join(dir, "dashboard.html"), filepath.Join(dir, "dashboard_csp.go")
	cmd := exec.Command("node", filepath.Join("host", "dashboard", "build.mjs"), page, csp)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	for built, committed := range map[string]string{page: "dashboard.html", csp: filepath.Join(root, "core", "httpapi", "dashboard_csp.go")} {
		want, err := os.ReadFile(built)
		require.NoError(t, err)
		got, err := os.ReadFile(committed)
		require.NoError(t, err)
		require.True(t, string(want) == string(got), "%s is stale against host/dashboard/src: run make dashboard", committed)
	}
	require.Equal(t, string(Page), mustRead(t, "dashboard.html"), "the embedded page is the file")
}

func mustRead(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
