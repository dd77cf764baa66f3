package ocserve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/asyncagents/asyncagents/internal/ssetest"
)

// Events subscribes to GET /event and delivers every frame until ctx ends
// or the server closes the stream; the channel is then closed. It returns
// once the stream is open (OpenCode's first frame, server.connected, is
// delivered too), so no event emitted after Events returns is missed.
//
// The channel is buffered; a reader that stops reading blocks the stream,
// so drain it or cancel ctx.
func (s *Server) Events(ctx context.Context) (<-chan Event, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/event", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("x-opencode-directory", s.Dir)
	s.authorize(req)
	// Only the connection and headers are bounded: the stream itself lives
	// as long as ctx.
	client := &http.Client{Transport: &http.Transport{Proxy: nil, ResponseHeaderTimeout: RequestTimeout, DisableCompression: true}}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET /event: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("GET /event: HTTP %d", resp.StatusCode)
	}
	ch := make(chan Event, 1024)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		frames := ssetest.NewReader(resp.Body)
		for {
			f, err := frames.Next()
			if err != nil {
				return
			}
			var ev Event
			if json.Unmarshal([]byte(f.Data), &ev) == nil {
				ev.At = time.Now()
				select {
				case ch <- ev:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return ch, nil
}
