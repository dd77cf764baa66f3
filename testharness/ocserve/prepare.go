package ocserve

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// prepare writes the isolated home (seeded config dir) and the project: a
// git repository (its root bounds OpenCode's upward config search and gives
// a stable project ID) unless opt.NoGit, a seeded .opencode, opencode.json and
// extra files.
func (s *Server) prepare(repoRoot string, opt Options) error {
	for _, d := range []string{s.xdg("config"), s.xdg("data"), s.xdg("cache"), s.xdg("state"), s.Dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	for _, d := range []string{filepath.Join(s.xdg("config"), "opencode"), filepath.Join(s.Dir, ".opencode")} {
		if opt.noSeed {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
			continue
		}
		if err := seedConfigDir(d, repoRoot); err != nil {
			return fmt.Errorf("seed %s: %w", d, err)
		}
	}
	cfg := baseConfig(opt.ModelURL, opt.Plugins)
	maps.Copy(cfg, opt.Config)
	if err := writeJSON(filepath.Join(s.Dir, "opencode.json"), cfg); err != nil {
		return err
	}
	for rel, content := range opt.Files {
		p := filepath.Join(s.Dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	git := func(args ...string) error {
		cmd := exec.Command("git", append([]string{"-c", "user.name=ocserve", "-c", "user.email=ocserve@example.invalid",
			"-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir, cmd.Env = s.Dir, s.env()
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if opt.NoGit {
		return nil
	}
	if err := os.WriteFile(filepath.Join(s.Dir, ".gitignore"), []byte(".opencode/node_modules\n"), 0o644); err != nil {
		return err
	}
	if err := git("init", "-q"); err != nil {
		return err
	}
	if err := git("add", "-A"); err != nil {
		return err
	}
	return git("commit", "-q", "-m", "init")
}

func (s *Server) xdg(kind string) string {
	return filepath.Join(s.Home, map[string]string{
		"config": ".config", "data": ".local/share", "cache": ".cache", "state": ".local/state"}[kind])
}

// env is a clean environment: nothing of the caller's (no API keys, no
// OPENCODE_* settings) beyond PATH and locale, isolated dirs, and the
// switches that keep OpenCode off the network.
func (s *Server) env() []string {
	env := []string{
		"HOME=" + s.Home,
		"XDG_CONFIG_HOME=" + s.xdg("config"),
		"XDG_DATA_HOME=" + s.xdg("data"),
		"XDG_CACHE_HOME=" + s.xdg("cache"),
		"XDG_STATE_HOME=" + s.xdg("state"),
		"TMPDIR=" + os.TempDir(),
		"TERM=dumb",
		"OPENCODE_DISABLE_AUTOUPDATE=1",
		"OPENCODE_DISABLE_MODELS_FETCH=1",
		"OPENCODE_DISABLE_SHARE=1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=1",
		"OPENCODE_DISABLE_CLAUDE_CODE=1",
		"GIT_CONFIG_NOSYSTEM=1",
	}
	for _, k := range []string{"PATH", "LANG", "LC_ALL", "TZ"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// Env is the environment the server runs in (its HOME and XDG folders), for a command run beside
// it, such as the CLI reading its server file.
func (s *Server) Env() []string { return s.env() }
