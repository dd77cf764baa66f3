package ocserve

import (
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Options describe one OpenCode server.
type Options struct {
	ModelURL string            // the mock model's URL(), ending in /v1
	Plugins  []string          // opencode.json "plugin" entries, e.g. "file:///abs/dist/asyncagents.js"
	Config   map[string]any    // merged over the generated opencode.json (top-level keys)
	Env      []string          // extra environment, KEY=VALUE
	Files    map[string]string // extra files in the project dir (relative paths)
	LogLevel string            // --log-level; "INFO" when empty
	// NoGit leaves the project a plain folder, no git repository: OpenCode then keeps no project
	// of its own for it (project "global"), as for a user who runs it in any folder.
	NoGit bool
	// NoPort starts the TUI (StartTUI) without --port, as most users run it: its server then
	// listens nowhere, and the plugin's client is in-process.
	NoPort bool
	// Password protects the server (OPENCODE_SERVER_PASSWORD): its start-up probes and this
	// package's client then send it as basic auth, username "opencode".
	Password string

	noSeed bool // leave config dirs bare (to measure what seeding saves)
}

// Limits: start-up is bounded so a hung server fails the test instead of the
// suite, and SIGTERM gets a bounded grace period before SIGKILL.
const (
	StartTimeout   = 60 * time.Second
	StopGrace      = 10 * time.Second
	RequestTimeout = 15 * time.Second
	probeEvery     = time.Second // faster probing kept 1.18 from binding its port
	probeTimeout   = 900 * time.Millisecond
)

// Server is one running `opencode serve`.
type Server struct {
	URL     string        // http://127.0.0.1:<port>
	Dir     string        // the project directory (a git repository unless Options.NoGit)
	Home    string        // HOME; XDG dirs live under it
	Started time.Duration // spawn -> first healthy answer
	// StopTook is SIGTERM -> exit, set by Stop.
	StopTook time.Duration

	t       testing.TB
	cmd     *exec.Cmd
	logs    *logBuffer
	http    *http.Client
	exited  chan struct{}
	waitErr error
	probes  []string // start-up probe outcomes, for the log

	password string // Options.Password: the client's basic auth

	stopOnce sync.Once
	stopErr  error

	// A TUI (StartTUI): its pane and process (tmux's child, not ours), and its log file.
	Pane    string
	tuiPID  int
	logFile string
}

// Start prepares an isolated home and project, starts `opencode serve` and
// waits (StartTimeout at most) until /global/health answers. t.Cleanup stops
// it and prints its logs if the test failed.
func Start(t testing.TB, opt Options) *Server {
	t.Helper()
	base := t.TempDir()
	return launch(t, opt, filepath.Join(base, "home"), filepath.Join(base, "project"), true)
}

// Restart starts a new `opencode serve` on the stopped server's home and project, as a user
// restarting OpenCode would: same data, same sessions, same plugin storage. opt.ModelURL,
// Plugins and Config are written to opencode.json again.
func Restart(t testing.TB, prev *Server, opt Options) *Server {
	t.Helper()
	if err := prev.Stop(); err != nil {
		t.Fatalf("ocserve: stop before restart: %v", err)
	}
	return launch(t, opt, prev.Home, prev.Dir, false)
}

// Beside starts a second `opencode serve` on a running server's home and project, as a user
// opening OpenCode twice on one project: both share the data, the sessions and the plugin's
// storage. opt is written to opencode.json again, as for Restart.
func Beside(t testing.TB, other *Server, opt Options) *Server {
	t.Helper()
	return launch(t, opt, other.Home, other.Dir, false)
}

func launch(t testing.TB, opt Options, home, dir string, fresh bool) *Server {
	t.Helper()
	bin := Binary(t)
	root := RepoRoot(t)
	s := &Server{
		t:        t,
		Dir:      dir,
		Home:     home,
		logs:     newLogBuffer(),
		http:     &http.Client{Transport: &http.Transport{Proxy: nil, DisableCompression: true}},
		exited:   make(chan struct{}),
		password: opt.Password,
	}
	if fresh {
		if err := s.prepare(root, opt); err != nil {
			t.Fatalf("ocserve: prepare: %v", err)
		}
	} else {
		cfg := baseConfig(opt.ModelURL, opt.Plugins)
		maps.Copy(cfg, opt.Config)
		if err := writeJSON(filepath.Join(s.Dir, "opencode.json"), cfg); err != nil {
			t.Fatalf("ocserve: rewrite opencode.json: %v", err)
		}
	}
	s.cmd = exec.Command(bin, append([]string{"serve"}, s.listenArgs(opt)...)...)
	s.cmd.Dir = s.Dir
	s.cmd.Env = append(s.env(), opt.Env...)
	if opt.Password != "" {
		s.cmd.Env = append(s.cmd.Env, "OPENCODE_SERVER_PASSWORD="+opt.Password)
	}
	// Our own pipe, not an io.Writer: with a Writer, Wait would also wait
	// for every grandchild still holding stdout, and Stop would mistime the
	// exit of opencode itself.
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatalf("ocserve: pipe: %v", err)
	}
	s.cmd.Stdout, s.cmd.Stderr = pw, pw
	// Own process group: a SIGKILL fallback then reaches bun helpers, LSPs
	// and MCP servers too. SIGTERM itself goes to opencode alone, as a
	// terminal or service manager would send it.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	spawned := time.Now()
	err = s.cmd.Start()
	pw.Close()
	if err != nil {
		pr.Close()
		t.Fatalf("ocserve: start %s: %v", bin, err)
	}
	go func() { _, _ = io.Copy(s.logs, pr); pr.Close() }()
	go func() { s.waitErr = s.cmd.Wait(); close(s.exited) }()
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("ocserve: stop: %v", err)
		}
		if t.Failed() {
			t.Logf("ocserve: start-up probes %v; opencode logs (%s):\n%s", s.probes, s.Dir, s.Logs())
		}
	})
	if err := s.waitHealthy(spawned); err != nil {
		t.Fatalf("ocserve: %v\nlogs:\n%s", err, s.Logs())
	}
	s.Started = time.Since(spawned)
	return s
}

// listenArgs picks a free port for the server (s.URL) and returns the flags that make OpenCode
// listen there, on 127.0.0.1, and print its logs at opt.LogLevel ("INFO" when empty).
func (s *Server) listenArgs(opt Options) []string {
	port, err := freePort()
	if err != nil {
		s.t.Fatalf("ocserve: free port: %v", err)
	}
	s.URL = "http://127.0.0.1:" + strconv.Itoa(port)
	level := opt.LogLevel
	if level == "" {
		level = "INFO"
	}
	return []string{"--port", strconv.Itoa(port), "--hostname", "127.0.0.1", "--print-logs", "--log-level", level}
}
