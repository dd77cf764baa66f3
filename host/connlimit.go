package host

import (
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/asyncagents/asyncagents/core"
)

// NewHTTPServer is the net/http server for the status API, with the limits both hosts keep
// (core/limits.go): a connection that sends nothing for core.APIIdleTimeoutMs is closed, whether
// it never sent its request or waits kept alive between two; at most core.APIMaxConnections are
// open, and a new one past the cap closes the connection idle longest. Event streams are busy
// (their handler runs), so they are never closed for idling, and their heartbeat goes on.
func NewHTTPServer(h http.Handler) *http.Server {
	return newHTTPServer(h, time.Duration(core.APIIdleTimeoutMs)*time.Millisecond, core.APIMaxConnections)
}

func newHTTPServer(h http.Handler, idle time.Duration, max int) *http.Server {
	l := &connLimit{max: max, conns: map[net.Conn]connInfo{}}
	return &http.Server{Handler: h, ReadHeaderTimeout: idle, IdleTimeout: idle, ConnState: l.track}
}

// connLimit counts the server's open connections by their state, as net/http reports it.
type connLimit struct {
	max   int
	mu    sync.Mutex
	conns map[net.Conn]connInfo
}

type connInfo struct {
	state http.ConnState
	since time.Time // when it went idle (or was accepted)
}

func (l *connLimit) track(c net.Conn, state http.ConnState) {
	l.mu.Lock()
	var victim net.Conn
	switch state {
	case http.StateNew:
		l.conns[c] = connInfo{state: state, since: time.Now()}
		if len(l.conns) > l.max {
			victim = l.idlest(c)
		}
	case http.StateActive:
		l.conns[c] = connInfo{state: state}
	case http.StateIdle:
		l.conns[c] = connInfo{state: state, since: time.Now()}
	case http.StateHijacked, http.StateClosed:
		delete(l.conns, c)
	}
	l.mu.Unlock()
	if victim != nil {
		// Its goroutine sees the read fail and reports it closed.
		_ = victim.Close()
	}
}

// idlest is the connection idle longest (one accepted and still silent counts as idle), or the
// new one itself when every other is busy: past the cap, a busy connection is never cut.
func (l *connLimit) idlest(fresh net.Conn) net.Conn {
	var victim net.Conn
	var since time.Time
	for c, info := range l.conns {
		if c == fresh || info.state == http.StateActive {
			continue
		}
		if victim == nil || info.since.Before(since) {
			victim, since = c, info.since
		}
	}
	if victim == nil {
		victim = fresh
	}
	delete(l.conns, victim)
	return victim
}
