package ocserve

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// StartTUI runs OpenCode's TUI, as a user does, in a new window of the tmux server on
// tmuxSocket: `opencode --port <free port>` in the same isolated home and project as Start, with
// its logs going to a file (Logs reads it). The TUI starts its server, and the plugins with it,
// in a Worker of its own; --port makes that server listen, so the returned Server's client works
// as it does against `opencode serve`. tmux gives the TUI's pane $TMUX and $TMUX_PANE, as it
// would a user's. Returns once the server answers (StartTimeout at most); t.Cleanup ends the TUI
// (SIGKILL) if the test did not. With opt.NoPort it runs `opencode` without --port, as most users
// do, and returns once the TUI is spawned: nothing answers HTTP then.
func StartTUI(t testing.TB, opt Options, tmuxSocket string) *Server {
	t.Helper()
	base := t.TempDir()
	s := &Server{
		t:       t,
		Dir:     filepath.Join(base, "project"),
		Home:    filepath.Join(base, "home"),
		logs:    newLogBuffer(),
		http:    &http.Client{Transport: &http.Transport{Proxy: nil, DisableCompression: true}},
		exited:  make(chan struct{}),
		logFile: filepath.Join(base, "tui.log"),
	}
	if err := s.prepare(RepoRoot(t), opt); err != nil {
		t.Fatalf("ocserve: prepare: %v", err)
	}
	var listen []string
	if opt.NoPort {
		level := opt.LogLevel
		if level == "" {
			level = "INFO"
		}
		listen = []string{"--print-logs", "--log-level", level}
	} else {
		listen = s.listenArgs(opt)
	}
	args := []string{"-L", tmuxSocket, "new-window", "-d", "-P", "-F", "#{pane_id} #{pane_pid}", "-c", s.Dir}
	// The TUI draws on a terminal, not a dumb one.
	for _, kv := range append(append(s.env(), opt.Env...), "TERM=xterm-256color", "LOGFILE="+s.logFile) {
		args = append(args, "-e", kv)
	}
	args = append(append(args, "--", "sh", "-c", `exec "$0" "$@" 2>>"$LOGFILE"`, Binary(t)), listen...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "tmux", args...).Output()
	if err != nil {
		t.Fatalf("ocserve: tmux new-window: %v", err)
	}
	fields := strings.Fields(string(out))
	if len(fields) != 2 {
		t.Fatalf("ocserve: tmux new-window answered %q", out)
	}
	s.Pane = fields[0]
	if s.tuiPID, err = strconv.Atoi(fields[1]); err != nil {
		t.Fatalf("ocserve: tmux new-window answered %q", out)
	}
	spawned := time.Now()
	go func() {
		// Not our child (tmux's): its exit is seen by polling.
		for alive(s.tuiPID) {
			time.Sleep(50 * time.Millisecond)
		}
		close(s.exited)
	}()
	t.Cleanup(func() {
		s.Kill()
		if t.Failed() {
			t.Logf("ocserve: TUI start-up probes %v; opencode logs (%s):\n%s", s.probes, s.Dir, s.Logs())
		}
	})
	if opt.NoPort {
		return s // no server to ask: the caller waits on the pane or the storage
	}
	if err := s.waitHealthy(spawned); err != nil {
		t.Fatalf("ocserve: TUI: %v\nlogs:\n%s", err, s.Logs())
	}
	s.Started = time.Since(spawned)
	return s
}

// WaitExit waits (bound at most) for the TUI to exit, and says whether it did.
func (s *Server) WaitExit(bound time.Duration) bool {
	select {
	case <-s.exited:
		return true
	case <-time.After(bound):
		return false
	}
}

// alive says whether pid runs. A process that has exited but is not reaped yet (a zombie: on
// this machine, orphans are never reaped) does not.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !os.IsNotExist(err)
	}
	// pid (comm) state ...: the state follows the last ')'.
	i := strings.LastIndexByte(string(stat), ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

func (s *Server) tuiLogs() string {
	b, err := os.ReadFile(s.logFile)
	if err != nil {
		return fmt.Sprintf("(no log file: %v)", err)
	}
	return string(b)
}
