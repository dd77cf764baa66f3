package host

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// serveLimited serves h on 127.0.0.1 with the given limits, until the test ends.
func serveLimited(t *testing.T, h http.Handler, idle time.Duration, max int) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := newHTTPServer(h, idle, max)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// closedByServer reports whether the server closed c within bound (a read ends in EOF or a reset,
// not in the read deadline).
func closedByServer(c net.Conn, bound time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(bound))
	_, err := c.Read(make([]byte, 1))
	return err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
}

func dial(t *testing.T, addr string) net.Conn {
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// A connection that sends nothing is closed after the idle timeout, one that never sent its
// request and one kept alive after an answer alike; a stream whose handler runs longer than the
// idle timeout is not cut.
func TestIdleConnectionsTimeOutStreamsDoNot(t *testing.T) {
	const idle = 150 * time.Millisecond
	addr := serveLimited(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/stream" {
			return
		}
		for i := 0; i < 8; i++ { // 8 × 50 ms: well past the idle timeout
			_, _ = w.Write([]byte("x"))
			w.(http.Flusher).Flush()
			time.Sleep(50 * time.Millisecond)
		}
	}), idle, 16)

	silent := dial(t, addr)
	require.True(t, closedByServer(silent, 10*time.Second), "a connection that never sends its request is closed")

	kept := dial(t, addr)
	_, err := kept.Write([]byte("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"))
	require.NoError(t, err)
	buf := make([]byte, 512)
	n, err := kept.Read(buf)
	require.NoError(t, err)
	require.Contains(t, string(buf[:n]), "200 OK")
	require.True(t, closedByServer(kept, 10*time.Second), "a kept-alive connection idle between requests is closed")

	res, err := http.Get("http://" + addr + "/stream")
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err, "the stream is not cut for idling")
	require.Equal(t, "xxxxxxxx", string(body))
}

// Past the cap, a new connection closes the one idle longest, never a busy one; with every other
// connection busy, the new one is closed itself.
func TestConnectionCapClosesTheIdlest(t *testing.T) {
	release := make(chan struct{})
	addr := serveLimited(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/busy" {
			w.(http.Flusher).Flush()
			<-release
		}
	}), time.Minute, 3)
	defer close(release)

	busy := dial(t, addr)
	_, err := busy.Write([]byte("GET /busy HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"))
	require.NoError(t, err)
	n, err := busy.Read(make([]byte, 512)) // its headers: the handler runs
	require.NoError(t, err)
	require.Positive(t, n)
	oldest := dial(t, addr)
	newer := dial(t, addr)
	// The fourth connection asks for /: the oldest idle one makes way.
	res, err := (&http.Client{Timeout: 10 * time.Second}).Get("http://" + addr + "/")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, 200, res.StatusCode)
	require.True(t, closedByServer(oldest, 10*time.Second), "the connection idle longest is closed")
	require.False(t, closedByServer(newer, 200*time.Millisecond), "the newer idle one stays")
	require.False(t, closedByServer(busy, 200*time.Millisecond), "the busy one stays")
}
