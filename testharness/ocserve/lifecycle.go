package ocserve

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"time"
)

// waitHealthy probes /global/health once a second, and once more as soon as
// the server prints that it listens, until it answers 200, the process
// exits, or StartTimeout passes. Each probe is a fresh connection with a
// short timeout: on 1.18.33 a request that connects while the port is being
// bound is accepted but never answered (seen on most starts at the 2 s
// tick), and faster probing kept the server from binding at all.
func (s *Server) waitHealthy(spawned time.Time) error {
	deadline := time.NewTimer(StartTimeout - time.Since(spawned))
	defer deadline.Stop()
	tick := time.NewTicker(probeEvery)
	defer tick.Stop()
	listening := s.logs.listening
	for {
		select {
		case <-s.exited:
			return fmt.Errorf("opencode exited during start-up: %v (probes %v)", s.waitErr, s.probes)
		case <-deadline.C:
			return fmt.Errorf("not healthy within %s (probes %v)", StartTimeout, s.probes)
		case <-listening:
			// The port is bound: probe now, then a second apart again.
			listening = nil
			tick.Reset(probeEvery)
		case <-tick.C:
		}
		t0 := time.Now()
		ok, err := s.probe()
		s.probes = append(s.probes, fmt.Sprintf("%s:%v(%s)", t0.Sub(spawned).Round(time.Millisecond), ok, errString(err, time.Since(t0))))
		if ok {
			return nil
		}
	}
}

func (s *Server) probe() (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/global/health", nil)
	s.authorize(req)
	client := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		return false, err
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK, nil
}

func errString(err error, took time.Duration) string {
	if err == nil {
		return took.Round(time.Millisecond).String()
	}
	return err.Error()
}

// Stop sends SIGTERM and waits StopGrace for the exit, then SIGKILLs the
// process group. It records StopTook and fails when SIGKILL was needed. Any
// process left in the group afterwards is killed too. Safe to call twice.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		if s.cmd == nil || s.cmd.Process == nil {
			return
		}
		pgid := s.cmd.Process.Pid
		start := time.Now()
		_ = syscall.Kill(-pgid, syscall.SIGCONT) // a paused server (Pause) could not act on SIGTERM
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
			s.StopTook = time.Since(start)
		case <-time.After(StopGrace):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-s.exited
			s.StopTook = time.Since(start)
			s.stopErr = fmt.Errorf("opencode ignored SIGTERM for %s; killed", StopGrace)
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL) // leftovers in the group
		s.http.CloseIdleConnections()
		s.t.Logf("ocserve: started in %s, SIGTERM -> exit took %s", s.Started.Round(time.Millisecond), s.StopTook.Round(time.Millisecond))
	})
	return s.stopErr
}

// Exited is closed when the opencode process has exited.
func (s *Server) Exited() <-chan struct{} { return s.exited }

// Logs returns the captured stdout and stderr. With --print-logs that is
// everything OpenCode also writes to $XDG_DATA_HOME/opencode/log, plugin
// logs (client.app.log) included.
// PID is the opencode process's: the plugin runs inside it, so it names the plugin's server file.
func (s *Server) PID() int {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

func (s *Server) Logs() string {
	if s.logFile != "" {
		return s.tuiLogs()
	}
	return s.logs.String()
}

// freePort asks the kernel for a free port on 127.0.0.1. Another process
// could take it before opencode binds it; start-up then fails loudly.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Kill ends opencode with SIGKILL (the whole process group), as a crash or `kill -9` would:
// nothing of it runs after this returns.
func (s *Server) Kill() {
	if s.tuiPID != 0 {
		select {
		case <-s.exited:
			return // gone already: its pid may be another process's by now
		default:
		}
		_ = syscall.Kill(s.tuiPID, syscall.SIGKILL)
		select {
		case <-s.exited:
		case <-time.After(StopGrace):
			s.t.Errorf("ocserve: the TUI (pid %d) outlived SIGKILL for %s", s.tuiPID, StopGrace)
		}
		return
	}
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.exited
}
