package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

type serverJSON struct {
	Port      int    `json:"port"`
	PID       int    `json:"pid"`
	StartedAt string `json:"startedAt"`
	URL       string `json:"url"`
	Token     string `json:"token"`
}

func freeTCPPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func storageOf(oc *ocserve.Server) core.Storage {
	return core.StoragePaths(filepath.Join(oc.Home, ".local", "share"), oc.Home, oc.Dir)
}

func apiGet(t *testing.T, url, token string, host string) (int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if host != "" {
		req.Host = host
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
	}
	return res.StatusCode, b.String()
}

// The status API inside the plugin, observed from outside: server.json (mode 0600) with the
// token, health without it, 401 without the token, 403 for a foreign Host, the task list and a
// task's logs, and an SSE stream with a snapshot then the task's frames. SIGTERM removes
// server.json.
func TestStatusAPIFromOutside(t *testing.T) {
	port := freeTCPPort(t)
	e := start(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD api":
			return mockmodel.Reply{Text: "api result", Delay: 1500 * time.Millisecond}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "**Agent"):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "GO":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Observed job", "CHILD api", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	}, fmt.Sprintf("ASYNCAGENTS_API_PORT=%d", port))
	// The plugin loads on the first request for the project.
	_, err := e.oc.CreateSession(e.ctx(30*time.Second), "warm-up")
	require.NoError(t, err)
	st := storageOf(e.oc)
	var sj serverJSON
	e.eventually("server.json", 30*time.Second, func() bool {
		b, err := os.ReadFile(st.ServerJSON)
		return err == nil && json.Unmarshal(b, &sj) == nil && sj.Port != 0
	})
	info, err := os.Stat(st.ServerJSON)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	require.Equal(t, port, sj.Port)
	require.Equal(t, fmt.Sprintf("http://127.0.0.1:%d", port), sj.URL)
	require.Len(t, sj.Token, 64)

	code, body := apiGet(t, sj.URL+"/v1/health", "", "")
	require.Equal(t, 200, code, body)
	require.Contains(t, body, `"status":"ok"`)
	code, _ = apiGet(t, sj.URL+"/v1/tasks", "", "")
	require.Equal(t, 401, code)
	code, _ = apiGet(t, sj.URL+"/v1/tasks", sj.Token, "evil.example")
	require.Equal(t, 403, code)

	// An event stream, open before the task starts.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", sj.URL+"/v1/events?token="+sj.Token, nil)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, 200, res.StatusCode)
	require.Equal(t, "text/event-stream", strings.Split(res.Header.Get("Content-Type"), ";")[0])
	events := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			if name, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				events <- name
			}
		}
		close(events)
	}()
	require.Equal(t, "snapshot", <-events)

	parent := e.prompt("GO")
	var seen []string
	for done := false; !done; {
		select {
		case ev, ok := <-events:
			require.True(t, ok, "stream closed early; saw %v", seen)
			seen = append(seen, ev)
			done = ev == "task.completed"
		case <-ctx.Done():
			t.Fatalf("no task.completed frame; saw %v", seen)
		}
	}
	require.Equal(t, "task.created", seen[0])

	id := idOf(e.toolParts(parent, "asyncagents_task")[0])
	code, body = apiGet(t, sj.URL+"/v1/tasks?status=completed", sj.Token, "")
	require.Equal(t, 200, code)
	require.Contains(t, body, `"total":1`)
	require.Contains(t, body, `"sessionID":"`+id+`"`)
	code, body = apiGet(t, sj.URL+"/v1/tasks/"+id+"/logs", sj.Token, "")
	require.Equal(t, 200, code)
	require.Contains(t, body, "api result", "the logs are the child's messages")
	code, _ = apiGet(t, sj.URL+"/v1/tasks?limit=500", sj.Token, "")
	require.Equal(t, 400, code)

	require.NoError(t, e.oc.Stop())
	_, err = os.Stat(st.ServerJSON)
	require.True(t, os.IsNotExist(err), "server.json is removed on SIGTERM")
}

// ASYNCAGENTS_API_ENABLED=false: no server, no server.json, tasks work as before.
func TestStatusAPIDisabled(t *testing.T) {
	e := start(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD x":
			return mockmodel.Reply{Text: "x done"}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "**Agent"):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "GO":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Plain job", "CHILD x", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	}, "ASYNCAGENTS_API_ENABLED=false")
	parent := e.prompt("GO")
	e.eventually("the notice", 60*time.Second, func() bool { return len(e.notices(parent)) == 1 })
	_, err := os.Stat(storageOf(e.oc).ServerJSON)
	require.True(t, os.IsNotExist(err), "no server.json when the API is disabled")
}
