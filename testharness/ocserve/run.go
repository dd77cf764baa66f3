package ocserve

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Run runs `opencode run <message>` once, headless, in a fresh home and project prepared as Start
// prepares them, and returns its combined output and how long the process took to exit. The
// process is killed at timeout, which is then the error: a plugin must never keep a one-shot
// OpenCode alive after its answer.
func Run(t testing.TB, opt Options, timeout time.Duration, message string) (string, time.Duration, error) {
	t.Helper()
	base := t.TempDir()
	s := &Server{t: t, Dir: filepath.Join(base, "project"), Home: filepath.Join(base, "home")}
	if err := s.prepare(RepoRoot(t), opt); err != nil {
		t.Fatalf("ocserve: prepare: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, Binary(t), "run", message)
	cmd.Dir = s.Dir
	cmd.Env = append(s.env(), opt.Env...)
	t0 := time.Now()
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	return string(out), time.Since(t0), err
}
