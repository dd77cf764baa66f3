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

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
)

// Resting: once its task is done, a worker holding none of this parent's tasks for its
// restAfterMs rests (its stream closed, as a proxy in front of the worker sees; its health asked
// instead: GET /v1/workers says so), and an "auto" task placed there afterwards wakes it: it is
// checked, its stream opened again, and its result comes back as the first one's did.
func TestWorkerRestsWhenIdleAndWakesForATask(t *testing.T) {
	launches := map[string][]mockmodel.ToolCall{
		"LAUNCH ONE": {remoteCall("One", "CHILD 1", "w1")},
		"LAUNCH TWO": {remoteCall("Two", "CHILD 2", "auto")},
	}
	script := func(req mockmodel.Request) mockmodel.Reply {
		if name, ok := strings.CutPrefix(firstUser(req), "CHILD "); ok {
			return mockmodel.Reply{Text: "result " + name}
		}
		if calls := launches[req.LastUser]; calls != nil && lastRole(req) == "user" {
			return mockmodel.Reply{ToolCalls: calls}
		}
		return mockmodel.Reply{Text: "waiting"}
	}
	// One local slot, three on w1: "auto" prefers w1 once it rests.
	proxy := startStreamProxy(t)
	f := startFleet(t, script, fleetOptions{workers: 1, config: map[string]any{"maxConcurrentStarts": 1},
		worker: map[string]any{"maxTasks": 3, "restAfterMs": 1000, "url": proxy.url()}})
	proxy.to(strings.TrimPrefix(f.workers["w1"].URL, "http://"))

	for i, prompt := range []string{"LAUNCH ONE", "LAUNCH TWO"} {
		parent := f.prompt(prompt)
		id := f.launchedTasks(parent, 1)[0]
		f.eventually("the notice of "+prompt, 120*time.Second, func() bool { return f.noticeOf(parent, id) != "" })
		task, _ := findStoredTask(f.oc, id)
		require.Equal(t, "completed", string(task.Status), f.noticeOf(parent, id))
		require.Equal(t, []string{"result 1", "result 2"}[i], task.Result)
		require.Equal(t, "w1", f.placeOf(id), "%s ran on the worker", prompt)
		require.Equal(t, 1, f.noticesOf(parent, id))
		f.waitIdle(parent)

		var w1 workerView
		f.eventually("w1 resting after "+prompt, 60*time.Second, func() bool {
			v, _ := f.workerViews()
			w1 = v["w1"]
			return w1.State == core.WorkerResting
		})
		require.Equal(t, core.WorkerReachable, w1.Health, "its stream was up when it rested")
		require.Zero(t, w1.Running)
		f.eventually("no stream of w1 open while it rests", 30*time.Second, func() bool { return proxy.streams() == 0 })
		require.Equal(t, i+1, proxy.streamsOpened(), "one stream for each task's stay (a wake opens one)")
	}
}

// streamProxy relays TCP to a worker and counts the connections that carry its event stream
// (a GET /global/event): those open now, and all opened.
type streamProxy struct {
	ln           net.Listener
	mu           sync.Mutex
	target       string
	open, opened int
}

func startStreamProxy(t *testing.T) *streamProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &streamProxy{ln: ln}
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
	head, _ := in.Peek(len("GET /global/event"))
	stream := bytes.Equal(head, []byte("GET /global/event"))
	if stream {
		p.mu.Lock()
		p.open++
		p.opened++
		p.mu.Unlock()
		defer func() { p.mu.Lock(); p.open--; p.mu.Unlock() }()
	}
	go func() {
		_, _ = io.Copy(up, in)
		up.Close() // the parent closed its side: the worker's answer ends too
	}()
	_, _ = io.Copy(c, up)
}
