package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/abi"
	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/host"
)

// serve runs the status API over a project's stored history until ctx ends: the same answers as
// the plugin's server (both come from the core), read-only, with no OpenCode needed. While the
// plugin keeps appending to the history, serve follows it and its event stream stays live.
func serve(ctx context.Context, a core.CLIArgs, stdout io.Writer) error {
	// $ASYNCAGENTS_API_AUTH goes to the core as it is: the core decides what it means.
	started := time.Now()
	api := config.APIConfig{Token: randomToken(), Auth: os.Getenv(core.EnvAPIAuth), StartedAt: started.UnixMilli()}
	api.ReadOnly = true // no cancel here: the tasks are OpenCode's, and it may not even run
	abs, c, st, err := openCommand(ctx, a)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	if err := configure(ctx, c, config.Config{API: api}, st); err != nil {
		return err
	}
	s := &server{core: c, api: &host.APIServer{Core: c, Now: nowMs}, dir: st.Dir, env: storageEnv(abs, a.Port)}
	// After a trap, a new instance is restored from the history as it is now; the frames and
	// timers it asks for are carried out as any others.
	c.OnTrap(host.Recovery{
		Source:  s.reread,
		Effects: s.carryOut,
		Log:     func(m string) { fmt.Fprintln(os.Stderr, "asyncagents serve:", m) },
	})
	restored, err := s.load(ctx)
	if err != nil {
		return err
	}
	ln, err := listen(st.APIPorts)
	if err != nil {
		return err
	}
	url := "http://" + ln.Addr().String()
	// Its own server file, as the plugin writes one: `asyncagents dashboard` finds it there.
	removeServerFile, err := writeOwnServerFile(ctx, c, st.ServerJSON, core.ServerFile{
		Port: ln.Addr().(*net.TCPAddr).Port, StartedAt: started.UTC().Format("2006-01-02T15:04:05.000Z"), URL: url, Token: api.Token, Auth: api.Auth, ReadOnly: true})
	if err != nil {
		ln.Close()
		return fmt.Errorf("writing its server file: %w", err)
	}
	defer removeServerFile()
	banner, err := c.Do(ctx, abi.Request{Op: "serve.banner", Banner: &core.ServeBanner{Restored: restored, Project: abs, URL: url, Token: api.Token, Auth: api.Auth}})
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, banner.Report)

	// The start: a read-only core asks each worker's health, as often as it says (worker.health).
	s.step(ctx, core.Event{Type: core.EventStart})
	// The heartbeat is the core's timer: one timer event arms it, and each beat re-arms it.
	s.step(ctx, core.Event{Type: core.EventTimer, TimerID: core.HeartbeatTimer})
	httpSrv := host.NewHTTPServer(s.api)
	served := make(chan error, 1)
	go func() { served <- httpSrv.Serve(ln) }()
	// It looks for lines the plugin appended to the history as often as the plugin looks at the
	// other processes' logs.
	tick := time.NewTicker(core.FollowIntervalMs * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-served:
			return err
		case <-tick.C:
			if err := s.follow(ctx); err != nil {
				fmt.Fprintln(os.Stderr, "asyncagents serve: following the history:", err)
			}
		case <-ctx.Done():
			// Streams end first (they never go idle); answers in flight get the grace period.
			s.api.CloseStreams()
			s.stopTimers()
			sctx, cancel := context.WithTimeout(context.Background(), core.StopGraceMs*time.Millisecond)
			defer cancel()
			return httpSrv.Shutdown(sctx)
		}
	}
}

// server holds what serve carries out for the core: timers and frames. Where it is in each log
// of the project's history (one per process that writes it, core/history_files.go) is the
// core's to know (follow.look).
type server struct {
	core *host.Core
	api  *host.APIServer
	dir  string         // the storage directory, where the logs are
	env  abi.StorageEnv // for the histories op, which names the logs

	mu     sync.Mutex // timers: a recovery runs on the call that trapped
	timers map[string]*time.Timer
}

func nowMs() int64 { return time.Now().UnixMilli() }

// load reads every log of the project and returns how many tasks they hold.
func (s *server) load(ctx context.Context) (int, error) {
	return s.followAll(ctx)
}

// reread starts a new instance (after a trap) empty: it knows no log, so the next look reads
// every log whole.
func (s *server) reread() (index, history []byte, state string, err error) {
	return nil, nil, "", nil
}

// follow applies what each log gained since the last look.
func (s *server) follow(ctx context.Context) error {
	_, err := s.followAll(ctx)
	return err
}

// followAll looks at every log the core names (those it holds tasks of included, which may be
// gone), and returns how many tasks the logs it read hold.
func (s *server) followAll(ctx context.Context) (int, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	plan, err := s.core.Do(ctx, abi.Request{Op: "histories", Env: &s.env, Files: names})
	if err != nil {
		return 0, err
	}
	total := 0
	for _, name := range plan.Histories.Follow {
		n, err := s.followOne(ctx, name, plan.Histories.Indexes[name])
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}

// followOne applies what the log name gained since the last look, as the core says (its
// follow.look: from where to read, whether all of it), or drops its tasks when it is gone (taken
// over by a process that writes them in its own log). Only the appended bytes are read: a
// working plugin appends every few seconds, and reading a 10 MB history whole each time would
// cost 10 MB a look.
//
// A log read for the first time comes with its index (index names it, when the core found one):
// 10,000 tasks then load from it as a restart's do.
func (s *server) followOne(ctx context.Context, name, index string) (int, error) {
	f, info, err := openHistory(filepath.Join(s.dir, name))
	if err != nil {
		return 0, err
	}
	req := abi.Request{Op: "follow.look", Now: nowMs(), Source: name}
	if f != nil {
		defer f.Close()
		req.Stat = host.FileStat(info)
	}
	look, err := s.core.Do(ctx, req)
	if err != nil {
		return 0, err
	}
	s.carryOut(ctx, look.Effects)
	if look.Follow == nil || !look.Follow.Read {
		return 0, nil
	}
	data, err := readFrom(f, look.Follow.From, info.Size())
	if err != nil {
		return 0, err
	}
	var r abi.Response
	follow := abi.Request{Op: "follow", Now: nowMs(), Source: name}
	if look.Follow.First && index != "" {
		r, err = s.core.DoRestore(ctx, follow, readIndex(filepath.Join(s.dir, index)), data)
	} else {
		r, err = s.core.DoHistory(ctx, follow, data)
	}
	if err != nil {
		return 0, err
	}
	s.carryOut(ctx, r.Effects)
	return r.Restore.Restored, nil
}

// step feeds the core one event and carries out what it asks.
func (s *server) step(ctx context.Context, ev core.Event) {
	effects, err := s.core.Step(ctx, nowMs(), ev)
	if err != nil {
		fmt.Fprintln(os.Stderr, "asyncagents serve:", err)
		return
	}
	s.carryOut(ctx, effects)
}

// carryOut performs the effects a read-only view can: frames, timers, logs and the workers'
// health asks. Anything that would talk to OpenCode or write the history is not for serve, and
// is dropped.
func (s *server) carryOut(ctx context.Context, effects []core.Effect) {
	for _, e := range effects {
		switch e.Kind {
		case core.EffectSSEBroadcast:
			s.api.Broadcast(e.Frame)
		case core.EffectTimerSet:
			id := e.TimerID
			s.mu.Lock()
			if s.timers == nil {
				s.timers = map[string]*time.Timer{}
			}
			if old := s.timers[id]; old != nil {
				old.Stop()
			}
			s.timers[id] = time.AfterFunc(time.Duration(e.DelayMs)*time.Millisecond, func() {
				s.step(ctx, core.Event{Type: core.EventTimer, TimerID: id})
			})
			s.mu.Unlock()
		case core.EffectTimerClear:
			s.mu.Lock()
			if t := s.timers[e.TimerID]; t != nil {
				t.Stop()
				delete(s.timers, e.TimerID)
			}
			s.mu.Unlock()
		case core.EffectLog:
			fmt.Fprintf(os.Stderr, "asyncagents serve: %s: %s\n", e.Level, e.Message)
		case core.EffectWorkerHealth:
			go s.askHealth(ctx, e) // bounded by host.WorkerHealthTimeout
		}
	}
}

// askHealth carries out a worker.health and tells the core its answer.
func (s *server) askHealth(ctx context.Context, e core.Effect) {
	ev := core.Event{Type: core.EventEffectDone, EffectID: e.ID, OK: true}
	res, err := host.WorkerHealth(ctx, e.Remote)
	if err != nil {
		ev.OK, ev.Error = false, err.Error()
	} else {
		ev.Result = res
	}
	if ctx.Err() == nil {
		s.step(ctx, ev)
	}
}

func (s *server) stopTimers() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.timers {
		t.Stop()
	}
}

// openHistory opens the log and says what file it is (a compaction renames a new one over it);
// a missing log is no file and no error.
func openHistory(path string) (*os.File, os.FileInfo, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

// readFrom reads f from byte offset from to its end; size is its size when opened, which sizes
// the buffer once: io.ReadAll grows its buffer by doublings, copying a large history again at
// each one, on the way to serve's first answer.
func readFrom(f *os.File, from, size int64) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, max(size-from, 0)+512))
	_, err := buf.ReadFrom(io.NewSectionReader(f, from, math.MaxInt64-from))
	return buf.Bytes(), err
}

// listen binds 127.0.0.1 on the first free port of ports, then on any port.
func listen(ports []int) (net.Listener, error) {
	var last error
	for _, p := range append(ports, 0) {
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err == nil {
			return ln, nil
		}
		last = err
	}
	return nil, last
}

func randomToken() string {
	b := make([]byte, core.APITokenBytes)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// readIndex reads the history index, or nothing: the core checks that it fits the log, and reads
// the whole log without it.
func readIndex(path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return b
}
