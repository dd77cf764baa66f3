package host_test

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/host"
)

// 300 idle sockets (more than core.APIMaxConnections) on the status API: /v1/health still
// answers, within a bound far below the idle timeout (the idle connections make way for it),
// and the server closed the idle sockets past its cap.
func TestIdleSocketsDoNotHoldUpHealth(t *testing.T) {
	const sockets = 300
	require.Greater(t, sockets, core.APIMaxConnections, "the test must go past the cap")
	inst := openInstance(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := host.NewHTTPServer(&host.APIServer{Core: inst, Now: func() int64 { return 1000 }})
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	addr := ln.Addr().String()

	idle := make([]net.Conn, 0, sockets)
	for range sockets {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		idle = append(idle, c)
	}
	// Well inside the idle timeout: an answer that waited for idle sockets to time out fails.
	bound := time.Duration(core.APIIdleTimeoutMs) * time.Millisecond / 3
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/v1/health", nil)
	require.NoError(t, err)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err, "/v1/health with %d idle sockets open", sockets)
	res.Body.Close()
	require.Equal(t, 200, res.StatusCode)

	closed := 0
	deadline := time.Now().Add(500 * time.Millisecond) // one for all: the closed ones read EOF at once
	for _, c := range idle {
		_ = c.SetReadDeadline(deadline)
		if _, err := c.Read(make([]byte, 1)); err != nil && !isTimeout(err) {
			closed++
		}
	}
	require.GreaterOrEqual(t, closed, sockets+1-core.APIMaxConnections, "the server holds at most its cap open")
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
