package ocserve

import (
	"context"
	"os"
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
	r := StartRun(t, opt, message)
	err := r.Wait(timeout)
	return r.Output(), r.Took, err
}

// Running is one `opencode run` under way. Its Server names the project and home it runs in (no
// server of its own listens), for reading what the plugin stored there.
type Running struct {
	*Server
	cmd    *exec.Cmd
	out    *logBuffer
	start  time.Time
	done   chan struct{}
	waited error
	// Took is start -> exit, set once the process has exited.
	Took time.Duration
}

// StartRun starts `opencode run <message>` as Run does, and returns at once.
func StartRun(t testing.TB, opt Options, message string) *Running {
	t.Helper()
	base := t.TempDir()
	s := &Server{t: t, Dir: filepath.Join(base, "project"), Home: filepath.Join(base, "home")}
	if err := s.prepare(RepoRoot(t), opt); err != nil {
		t.Fatalf("ocserve: prepare: %v", err)
	}
	r := &Running{Server: s, out: newLogBuffer(), done: make(chan struct{})}
	r.cmd = exec.Command(Binary(t), "run", message)
	r.cmd.Dir = s.Dir
	// `opencode run` takes its directory from $PWD, not from its working directory.
	r.cmd.Env = append(append(s.env(), "PWD="+s.Dir), opt.Env...)
	r.cmd.Stdout, r.cmd.Stderr = r.out, r.out
	r.start = time.Now()
	if err := r.cmd.Start(); err != nil {
		t.Fatalf("ocserve: opencode run: %v", err)
	}
	go func() {
		r.waited = r.cmd.Wait()
		r.Took = time.Since(r.start)
		close(r.done)
	}()
	t.Cleanup(func() {
		select {
		case <-r.done:
		default:
			_ = r.cmd.Process.Kill()
			<-r.done
		}
	})
	return r
}

// Wait waits for the process to exit, at most timeout (then it is killed, and the error says
// so), and returns how it exited.
func (r *Running) Wait(timeout time.Duration) error {
	select {
	case <-r.done:
		return r.waited
	case <-time.After(timeout):
		_ = r.cmd.Process.Kill()
		<-r.done
		return context.DeadlineExceeded
	}
}

// Signal sends sig to the process.
func (r *Running) Signal(sig os.Signal) error { return r.cmd.Process.Signal(sig) }

// Output is what the process wrote so far, stdout and stderr together.
func (r *Running) Output() string { return r.out.String() }
