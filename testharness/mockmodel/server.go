package mockmodel

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// TitleText is the automatic answer to OpenCode's title-generation request.
const TitleText = "Mock session"

// Server is a running mock model on 127.0.0.1.
type Server struct {
	srv *http.Server
	url string

	mu       sync.Mutex
	script   Script
	requests []Request
	arrived  chan struct{} // closed and replaced on every request
	nextCall int
	nextID   int
}

// Start listens on 127.0.0.1:0 and serves script (nil answers "ok"). The
// server closes on t.Cleanup, cutting any stream still open.
func Start(t testing.TB, script Script) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("mockmodel: listen: %v", err)
	}
	s := &Server{script: script, url: "http://" + ln.Addr().String() + "/v1", arrived: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.handleChat)
	mux.HandleFunc("POST /chat/completions", s.handleChat)
	mux.HandleFunc("GET /v1/models", s.handleModels)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// URL is the base URL ending in /v1, for a provider's options.baseURL.
func (s *Server) URL() string { return s.url }

// Close stops the server and cuts open connections. Safe to call twice.
func (s *Server) Close() error { return s.srv.Close() }

// SetScript replaces the script for the requests that arrive from now on.
func (s *Server) SetScript(script Script) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = script
}

// Requests returns every chat request received, title requests included, in
// arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Turns returns the requests that reached the script (title requests left
// out): the model turns a test usually counts.
func (s *Server) Turns() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if !r.Title {
			out = append(out, r)
		}
	}
	return out
}

// WaitFor returns the first request (already received or still to come)
// that matches, or ctx's error. Tests use it to act while a turn is in flight.
func (s *Server) WaitFor(ctx context.Context, match func(Request) bool) (Request, error) {
	seen := 0
	for {
		s.mu.Lock()
		reqs, arrived := s.requests, s.arrived
		s.mu.Unlock()
		for ; seen < len(reqs); seen++ {
			if match(reqs[seen]) {
				return reqs[seen], nil
			}
		}
		select {
		case <-arrived:
		case <-ctx.Done():
			return Request{}, fmt.Errorf("mockmodel: no matching request among %d: %w", seen, ctx.Err())
		}
	}
}

func (s *Server) handleModels(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{"object":"list","data":[{"id":"mock-a","object":"model","owned_by":"mock"},{"id":"mock-b","object":"model","owned_by":"mock"}]}`)
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "")
		return
	}
	req, wire, err := parseRequest(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf(`{"error":{"message":%q,"type":"invalid_request_error"}}`, err.Error()))
		return
	}
	req.Received = time.Now()

	s.mu.Lock()
	s.requests = append(s.requests, req)
	close(s.arrived)
	s.arrived = make(chan struct{})
	script := s.script
	s.mu.Unlock()

	var reply Reply
	switch {
	case req.Title:
		reply = Reply{Text: TitleText}
	case script == nil:
		reply = Reply{Text: "ok"}
	default:
		reply, err = runScript(script, req)
		if err != nil {
			writeError(w, http.StatusInternalServerError, fmt.Sprintf(`{"error":{"message":%q,"type":"server_error"}}`, err.Error()))
			return
		}
	}

	if reply.Delay > 0 && !sleepCtx(r.Context(), reply.Delay) {
		return // the client gave up
	}
	for k, vs := range reply.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if reply.Status != 0 && reply.Status != http.StatusOK {
		writeError(w, reply.Status, reply.ErrorBody)
		return
	}
	a := s.prepare(req, reply)
	a.usage = usageFor(body, a)
	if wire.Stream {
		writeStream(w, a, wire.StreamOptions != nil && wire.StreamOptions.IncludeUsage)
	} else {
		writeJSON(w, a)
	}
}

// prepare fills tool-call IDs, the completion ID and the finish reason.
func (s *Server) prepare(req Request, reply Reply) answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	a := answer{id: fmt.Sprintf("chatcmpl-mock-%d", s.nextID), model: req.Model,
		created: time.Now().Unix(), text: reply.Text, finish: reply.FinishReason}
	for _, c := range reply.ToolCalls {
		if c.ID == "" {
			s.nextCall++
			c.ID = fmt.Sprintf("call_%d", s.nextCall)
		}
		a.calls = append(a.calls, c)
	}
	if a.finish == "" {
		a.finish = "stop"
		if len(a.calls) > 0 {
			a.finish = "tool_calls"
		}
	}
	return a
}

// runScript calls the script, turning a panic into an error so one bad
// script answers 500 instead of killing the test binary.
func runScript(script Script, req Request) (reply Reply, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("mockmodel: script panicked: %v", p)
		}
	}()
	return script(req), nil
}

// sleepCtx waits d or until ctx ends; it reports whether d elapsed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
