package ocserve

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The binary we run must be the version package.json pins.
func TestBinaryIsPinnedVersion(t *testing.T) {
	bin := Binary(t)
	want := packageVersion(filepath.Join(RepoRoot(t), "node_modules", "opencode-ai"))
	require.NotEmpty(t, want)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--version")
	cmd.Env = (&Server{Home: t.TempDir()}).env()
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.Equal(t, want, strings.TrimSpace(string(out)))
}
