package e2e

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
)

// streamProxy relays TCP to a worker and counts the connections that carry its event stream
// (a GET /global/event): those open now, and all opened. While held, it cuts the open streams
// and every new one at once, and relays the rest: a network fault the parent's stream sees and
// its requests do not.
type streamProxy struct {
	ln           net.Listener
	mu           sync.Mutex
	target       string
	open, opened int
	held         bool
	conns        map[net.Conn]bool
}

func startStreamProxy(t *testing.T) *streamProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &streamProxy{ln: ln, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.relay(c)
		}
	}()
	return p
}

func (p *streamProxy) url() string { return "http://" + p.ln.Addr().String() }

// to sets the worker's host:port (the parent reconnects with a backoff until it is set).
func (p *streamProxy) to(target string) { p.mu.Lock(); p.target = target; p.mu.Unlock() }

func (p *streamProxy) streams() int { p.mu.Lock(); defer p.mu.Unlock(); return p.open }

func (p *streamProxy) streamsOpened() int { p.mu.Lock(); defer p.mu.Unlock(); return p.opened }

// hold cuts the event streams and refuses new ones until it is called with false.
func (p *streamProxy) hold(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.held = on
	if on {
		for c := range p.conns {
			c.Close()
		}
	}
}

func (p *streamProxy) relay(c net.Conn) {
	defer c.Close()
	p.mu.Lock()
	target := p.target
	p.mu.Unlock()
	up, err := net.DialTimeout("tcp", target, 5*time.Second)
	if err != nil {
		return
	}
	defer up.Close()
	in := bufio.NewReader(c)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second)) // a client that never asks is let go
	head, _ := in.Peek(len("GET /global/event"))
	_ = c.SetReadDeadline(time.Time{})
	stream := bytes.Equal(head, []byte("GET /global/event"))
	if stream {
		p.mu.Lock()
		if p.held {
			p.mu.Unlock()
			return
		}
		p.open++
		p.opened++
		p.conns[c] = true
		p.mu.Unlock()
		defer func() { p.mu.Lock(); p.open--; delete(p.conns, c); p.mu.Unlock() }()
	}
	go func() {
		_, _ = io.Copy(up, in)
		up.Close() // the parent closed its side: the worker's answer ends too
	}()
	_, _ = io.Copy(c, up)
}

// startGapFleet starts a fleet of one worker behind a stream proxy, its lostAfterMs long enough to
// outlast a cut, with workerConfig as the worker's OpenCode config, and waits until it is up.
func startGapFleet(t *testing.T, script mockmodel.Script, workerConfig map[string]any) (*fleet, *streamProxy) {
	t.Helper()
	proxy := startStreamProxy(t)
	f := startFleet(t, script, fleetOptions{workers: 1,
		worker:       map[string]any{"url": proxy.url(), "lostAfterMs": 120_000},
		workerConfig: workerConfig})
	proxy.to(strings.TrimPrefix(f.workers["w1"].URL, "http://"))
	f.waitWorkersUp()
	return f, proxy
}
