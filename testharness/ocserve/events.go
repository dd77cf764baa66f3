package ocserve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
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
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64*1024), 64*1024*1024)
		var data strings.Builder
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "data:"); ok {
				data.WriteString(strings.TrimPrefix(v, " "))
				continue
			}
			if line != "" || data.Len() == 0 {
				continue
			}
			var ev Event
			if json.Unmarshal([]byte(data.String()), &ev) == nil {
				ev.At = time.Now()
				select {
				case ch <- ev:
				case <-ctx.Done():
					return
				}
			}
			data.Reset()
		}
	}()
	return ch, nil
}
