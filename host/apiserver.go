package host

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/abi"
	"github.com/asyncagents/asyncagents/core/httpapi"
	"github.com/asyncagents/asyncagents/host/dashboard"
)

// APIServer is the status API over net/http: every answer comes from the core's http op (the
// same code the plugin's Bun.serve calls), event streams get the frames passed to Broadcast.
type APIServer struct {
	Core *Core
	// Now is the clock passed to the core (Unix ms).
	Now func() int64
	// Logs returns a task session's messages as JSON; nil means they cannot be had here (the CLI
	// reading stored history while OpenCode is not running).
	Logs func(ctx context.Context, sessionID string) ([]byte, error)
	// Effects carries out what a request that changed state (a cancel) asks of the host; nil
	// drops them (a server with no OpenCode behind it, whose core refuses to cancel anyway).
	Effects func(ctx context.Context, effects []core.Effect)

	mu      sync.Mutex
	streams map[chan string]struct{}
}

func (s *APIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	headers := map[string]string{}
	for k, v := range r.Header {
		headers[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	headers["host"] = r.Host
	s.mu.Lock()
	subscribers := len(s.streams)
	s.mu.Unlock()
	port := 0
	if addr, ok := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr); ok {
		port = addr.Port
	}
	entropy, body := "", ""
	if r.Method == http.MethodPost {
		// Fresh randomness: the dashboard's one-time codes are made of it (the core has none).
		entropy = rand.Text() + rand.Text()
		// The body, one byte past the core's limit at most: the core refuses a longer one.
		b, _ := io.ReadAll(io.LimitReader(r.Body, httpapi.MaxRequestBodyBytes+1))
		body = string(b)
	}
	resp, err := s.Core.Do(r.Context(), abi.Request{Op: "http", Now: s.Now(), HTTP: &httpapi.Request{
		Method: r.Method, Port: port, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery, Headers: headers, Subscribers: subscribers, Entropy: entropy, Body: body,
	}})
	if err != nil || resp.HTTP == nil {
		// A core that stopped after a trap loop says so, as every tool call does.
		if halted := s.Core.Halted(); halted != "" {
			writeError(w, http.StatusServiceUnavailable, halted)
			return
		}
		writeError(w, http.StatusInternalServerError, core.APIErrCoreFailed)
		return
	}
	if len(resp.Effects) > 0 && s.Effects != nil {
		s.Effects(r.Context(), resp.Effects)
	}
	h := resp.HTTP
	for k, v := range h.Headers {
		w.Header().Set(k, v)
	}
	switch {
	case h.Stream:
		s.stream(w, r, h)
	case h.Asset != "":
		if h.Asset != httpapi.DashboardAsset {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.WriteHeader(h.Status)
		_, _ = w.Write(dashboard.Page)
	case h.Logs != "":
		if s.Logs == nil {
			writeError(w, http.StatusServiceUnavailable, core.APIErrLogsNoOpenCode)
			return
		}
		body, err := s.Logs(r.Context(), h.Logs)
		if err != nil {
			writeError(w, http.StatusBadGateway, core.APIErrLogsFailed+": "+err.Error())
			return
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	case h.Messages != "" && s.Logs != nil:
		// The child's conversation: OpenCode's messages, put in the core's shape. With no
		// OpenCode to ask, the core's own body (what the history keeps) is the answer.
		raw, err := s.Logs(r.Context(), h.Messages)
		if err != nil {
			writeError(w, http.StatusBadGateway, core.APIErrLogsFailed+": "+err.Error())
			return
		}
		c, err := s.Core.DoHistory(r.Context(), abi.Request{Op: "messages"}, raw)
		if err != nil || c.HTTP == nil {
			writeError(w, http.StatusInternalServerError, core.APIErrCoreFailed)
			return
		}
		for k, v := range c.HTTP.Headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(c.HTTP.Status)
		_, _ = w.Write([]byte(c.HTTP.Body))
	default:
		w.WriteHeader(h.Status)
		if h.Status != http.StatusNoContent {
			_, _ = w.Write([]byte(h.Body))
		}
	}
}

// writeError answers with an error the host gives itself, in the shape of the core's own:
// {"error": text}. The headers the core chose, if any, are already set.
func writeError(w http.ResponseWriter, status int, text string) {
	body, _ := json.Marshal(map[string]string{"error": text})
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func (s *APIServer) stream(w http.ResponseWriter, r *http.Request, h *httpapi.Response) {
	flusher, _ := w.(http.Flusher)
	ch := make(chan string, core.StreamBufferFrames)
	s.mu.Lock()
	if s.streams == nil {
		s.streams = map[chan string]struct{}{}
	}
	s.streams[ch] = struct{}{}
	s.mu.Unlock()
	defer s.drop(ch)
	w.WriteHeader(h.Status)
	_, _ = w.Write([]byte(h.Body))
	if flusher != nil {
		flusher.Flush()
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case frame, ok := <-ch:
			if !ok {
				return // dropped: it fell too far behind
			}
			if _, err := w.Write([]byte(frame)); err != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
	}
}

// Broadcast queues a frame for every stream without waiting: a subscriber whose buffer is full
// is dropped, so a slow reader never holds up the others or the caller.
func (s *APIServer) Broadcast(frame string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ch := range s.streams {
		select {
		case ch <- frame:
		default:
			delete(s.streams, ch)
			close(ch)
		}
	}
}

func (s *APIServer) drop(ch chan string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.streams[ch]; ok {
		delete(s.streams, ch)
		close(ch)
	}
}

// CloseStreams ends every event stream: a stream never goes idle, so a graceful shutdown ends
// them before it waits for the answers still in flight.
func (s *APIServer) CloseStreams() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ch := range s.streams {
		delete(s.streams, ch)
		close(ch)
	}
}
