package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
)

// takenPortPair holds a listener on a port P whose next port P+1 is free at the time of asking, so
// a server told to use P must move on to P+1.
func takenPortPair(t *testing.T) (taken net.Listener, next int) {
	t.Helper()
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		p := l.Addr().(*net.TCPAddr).Port
		if p < 65535-9 {
			if probe, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+1)); err == nil {
				probe.Close()
				t.Cleanup(func() { l.Close() })
				return l, p + 1
			}
		}
		l.Close()
	}
	t.Fatal("no port P with P+1 free in 50 tries")
	return nil, 0
}

// The status API's port is taken by another program: the plugin binds the next port of its list,
// its server file names that port, and the API answers there.
func TestStatusAPIMovesToTheNextPortWhenItsPortIsTaken(t *testing.T) {
	taken, next := takenPortPair(t)
	port := taken.Addr().(*net.TCPAddr).Port
	e := start(t, mockmodel.Text("ok"), fmt.Sprintf("ASYNCAGENTS_API_PORT=%d", port))
	oc := e.oc
	// The plugin loads on the first request for the project.
	_, err := oc.CreateSession(e.ctx(30*time.Second), "warm-up")
	require.NoError(t, err)
	var sj serverJSON
	e.eventually("the server file", 30*time.Second, func() bool {
		b, err := os.ReadFile(serverFileOf(storageOf(oc)))
		return err == nil && json.Unmarshal(b, &sj) == nil && sj.Port != 0
	})
	require.Equal(t, next, sj.Port, "the port after the taken one")
	require.Equal(t, fmt.Sprintf("http://127.0.0.1:%d", next), sj.URL)
	code, body := apiGet(t, sj.URL+"/v1/health", "", "")
	require.Equal(t, 200, code, body)
	code, _ = apiGet(t, sj.URL+"/v1/tasks", sj.Token, "")
	require.Equal(t, 200, code)
}
