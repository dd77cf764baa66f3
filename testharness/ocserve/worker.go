package ocserve

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Prepare makes the isolated home and project Start would, without starting OpenCode: a test
// can then clone the project, or write files that must be there before the first start.
// Launch starts OpenCode on it.
func Prepare(t testing.TB, opt Options) *Server {
	t.Helper()
	base := t.TempDir()
	s := &Server{t: t, Home: filepath.Join(base, "home"), Dir: filepath.Join(base, "project")}
	if err := s.prepare(RepoRoot(t), opt); err != nil {
		t.Fatalf("ocserve: prepare: %v", err)
	}
	return s
}

// Launch starts `opencode serve` on a prepared (or stopped) server's home and project.
func Launch(t testing.TB, prepared *Server, opt Options) *Server {
	t.Helper()
	return launch(t, opt, prepared.Home, prepared.Dir, false)
}

// WorkerOptions describe a worker: a plain `opencode serve`, without any plugin, protected by a
// password, on its own home and its own clone of a project.
type WorkerOptions struct {
	ModelURL string // the mock model's URL(), as for Options
	CloneOf  string // the project (a git repository) the worker clones
	Password string // OPENCODE_SERVER_PASSWORD; a random one when empty
	LogLevel string
	Config   map[string]any // merged over the worker's opencode.json (top-level keys)
	Env      []string       // extra environment, KEY=VALUE (a clock of its own: faketime.go)
}

// StartWorker clones opt.CloneOf into a fresh home and starts a plain OpenCode on the clone. The
// clone's opencode.json is the worker's own (the mock model, no plugin) and its .opencode folder
// is removed, both committed on the worker: a git worktree OpenCode makes there is a plain
// OpenCode project too, which neither loads the project's plugin nor installs packages.
func StartWorker(t testing.TB, opt WorkerOptions) *Server {
	t.Helper()
	if opt.Password == "" {
		opt.Password = RandomPassword(t)
	}
	base := t.TempDir()
	s := &Server{t: t, Home: filepath.Join(base, "home"), Dir: filepath.Join(base, "project")}
	if err := s.prepareClone(RepoRoot(t), opt); err != nil {
		t.Fatalf("ocserve: prepare worker: %v", err)
	}
	return launch(t, Options{ModelURL: opt.ModelURL, Password: opt.Password, LogLevel: opt.LogLevel, Config: opt.Config, Env: opt.Env}, s.Home, s.Dir, false)
}

func (s *Server) prepareClone(repoRoot string, opt WorkerOptions) error {
	for _, d := range []string{s.xdg("config"), s.xdg("data"), s.xdg("cache"), s.xdg("state")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := seedConfigDir(filepath.Join(s.xdg("config"), "opencode"), repoRoot); err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	git := func(dir string, args ...string) error {
		cmd := exec.Command("git", append([]string{"-c", "user.name=ocserve", "-c", "user.email=ocserve@example.invalid",
			"-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir, cmd.Env = dir, s.env()
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := git(filepath.Dir(s.Dir), "clone", "-q", opt.CloneOf, s.Dir); err != nil {
		return err
	}
	cfg := baseConfig(opt.ModelURL, nil)
	maps.Copy(cfg, opt.Config)
	if err := writeJSON(filepath.Join(s.Dir, "opencode.json"), cfg); err != nil {
		return err
	}
	if err := os.RemoveAll(filepath.Join(s.Dir, ".opencode")); err != nil {
		return err
	}
	if err := git(s.Dir, "add", "-A"); err != nil {
		return err
	}
	return git(s.Dir, "commit", "-q", "-m", "worker: plain OpenCode on the mock model")
}

// RandomPassword is a fresh password, unlike any string a test could otherwise produce: finding it
// anywhere means it leaked.
func RandomPassword(t testing.TB) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("ocserve: random password: %v", err)
	}
	return "pw-" + hex.EncodeToString(b)
}

// Password is the server's OPENCODE_SERVER_PASSWORD ("" when it has none).
func (s *Server) Password() string { return s.password }

// Pause stops the server's process group with SIGSTOP, as a machine or network that freezes:
// its sockets stay open and nothing answers. Resume continues it.
func (s *Server) Pause() { s.signalGroup(syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() { s.signalGroup(syscall.SIGCONT) }

func (s *Server) signalGroup(sig syscall.Signal) {
	s.t.Helper()
	if s.cmd == nil || s.cmd.Process == nil {
		s.t.Fatalf("ocserve: %v to a server that never started", sig)
	}
	if err := syscall.Kill(-s.cmd.Process.Pid, sig); err != nil {
		s.t.Fatalf("ocserve: %v: %v", sig, err)
	}
}
