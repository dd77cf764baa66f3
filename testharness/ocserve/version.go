package ocserve

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Version is the version of the OpenCode that Binary runs: the pinned opencode-ai package's
// (Binary checks that its native binary has the same), or, for a binary named by BinaryEnv, what
// it prints for --version (in a scratch home, 30 s at most; "" when it prints nothing).
func Version(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(BinaryEnv); p != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		home := t.TempDir()
		cmd := exec.CommandContext(ctx, p, "--version")
		cmd.Env = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
			"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
			"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"), "PATH=" + os.Getenv("PATH"),
			"OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1"}
		out, _ := cmd.Output()
		return strings.TrimSpace(string(out))
	}
	return packageVersion(filepath.Join(RepoRoot(t), "node_modules", "opencode-ai"))
}
