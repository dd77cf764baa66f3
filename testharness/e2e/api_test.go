package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/internal/ssetest"
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

// freeTCPPort is a port free now for a plugin's status API (ASYNCAGENTS_API_PORT). It is taken
// below Linux's ephemeral range (32768 and up): a port the kernel hands out for ":0", as
// OpenCode's own server gets its port in these tests, could be handed out again before the plugin
// binds it, and the plugin would then take the next one.
func freeTCPPort(t *testing.T) int {
	for range 200 {
		port := 20000 + rand.IntN(12000)
		if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			l.Close()
			return port
		}
	}
	t.Fatal("no free port from 20000 to 31999")
	return 0
}

// storageOf is where the plugin keeps oc's project's files: the plugin names the project by its
// path with symlinks resolved.
func storageOf(oc *ocserve.Server) core.Storage {
	dir := oc.Dir
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return core.StoragePaths(filepath.Join(oc.Home, ".local", "share"), oc.Home, dir)
}

// serverFileOf is the project's server file: each process serving it writes its own,
// servers-<key>/<pid>.json; with one OpenCode running there is one. A path that does not exist
// when there is none.
func serverFileOf(st core.Storage) string {
	found, _ := filepath.Glob(filepath.Join(st.ServerDir, "*.json"))
	if len(found) == 0 {
		return filepath.Join(st.ServerDir, "none.json")
	}
	return found[0]
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
// server.json. It runs twice: with the core in the plugin's Worker (the default), and in
// OpenCode's own thread (ASYNCAGENTS_WORKER=false, the fallback when no Worker can start).
func TestStatusAPIFromOutside(t *testing.T) {
	t.Run("worker", func(t *testing.T) { statusAPIFromOutside(t, "worker") })
	t.Run("opencode-thread", func(t *testing.T) { statusAPIFromOutside(t, "opencode thread", "ASYNCAGENTS_WORKER=false") })
}

func statusAPIFromOutside(t *testing.T, thread string, env ...string) {
	port := freeTCPPort(t)
	e := start(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD api":
			return mockmodel.Reply{Text: "api result", Delay: 1500 * time.Millisecond}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "GO":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Observed job", "CHILD api", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	}, append(env, fmt.Sprintf("ASYNCAGENTS_API_PORT=%d", port))...)
	// The plugin loads on the first request for the project.
	_, err := e.oc.CreateSession(e.ctx(30*time.Second), "warm-up")
	require.NoError(t, err)
	st := storageOf(e.oc)
	var sj serverJSON
	e.eventually("server.json", 30*time.Second, func() bool {
		b, err := os.ReadFile(serverFileOf(st))
		return err == nil && json.Unmarshal(b, &sj) == nil && sj.Port != 0
	})
	info, err := os.Stat(serverFileOf(st))
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
		frames := ssetest.NewReader(res.Body)
		for {
			f, err := frames.Next()
			if err != nil {
				break
			}
			events <- f.Event
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
			if ev == "heartbeat" {
				continue // every 30 s, whatever the tasks do: a slow start can see one
			}
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
	require.Contains(t, body, `"id":"`+id+`","sessionID":"`+e.sessionOf(id)+`"`, "the task's own ID, then its child session's")
	for _, which := range []string{id, e.sessionOf(id)} {
		code, body = apiGet(t, sj.URL+"/v1/tasks/"+which+"/logs", sj.Token, "")
		require.Equal(t, 200, code)
		require.Contains(t, body, "api result", "the logs are the child's messages, found by either ID")
	}
	code, _ = apiGet(t, sj.URL+"/v1/tasks?limit=500", sj.Token, "")
	require.Equal(t, 400, code)
	require.Contains(t, e.oc.Logs(), "asyncagents: core loaded ("+thread+"): runtime +", "the core ran where it was asked to")

	require.NoError(t, e.oc.Stop())
	_, err = os.Stat(serverFileOf(st))
	require.True(t, os.IsNotExist(err), "server.json is removed on SIGTERM")
}

// ASYNCAGENTS_API_ENABLED=false: no server, no server.json, tasks work as before.
func TestStatusAPIDisabled(t *testing.T) {
	e := start(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD x":
			return mockmodel.Reply{Text: "x done"}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "GO":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Plain job", "CHILD x", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	}, "ASYNCAGENTS_API_ENABLED=false")
	parent := e.prompt("GO")
	e.eventually("the notice", 60*time.Second, func() bool { return len(e.notices(parent)) == 1 })
	_, err := os.Stat(serverFileOf(storageOf(e.oc)))
	require.True(t, os.IsNotExist(err), "no server.json when the API is disabled")
}

// startWithAPI starts OpenCode with the plugin given these options (opencode.json's
// ["…/asyncagents.js", options] form), extraEnv in its environment and its status API on a free
// port, and returns once server.json names that port.
func startWithAPI(t *testing.T, script mockmodel.Script, options map[string]any, extraEnv ...string) (*env, serverJSON) {
	t.Helper()
	return startWithConfig(t, script, map[string]any{"plugin": []any{[]any{ocserve.PluginSpec(t), options}}}, extraEnv...)
}

// startWithConfig is startWithAPI with the whole of opencode.json given (it names the plugin).
func startWithConfig(t *testing.T, script mockmodel.Script, config map[string]any, extraEnv ...string) (*env, serverJSON) {
	t.Helper()
	return startServing(t, script, ocserve.Options{Config: config}, extraEnv...)
}

// startServing is startWithConfig with the project's other options (its files) given in opts.
func startServing(t *testing.T, script mockmodel.Script, opts ocserve.Options, extraEnv ...string) (*env, serverJSON) {
	t.Helper()
	port := freeTCPPort(t)
	model := mockmodel.Start(t, script)
	opts.ModelURL = model.URL()
	opts.Env = append([]string{fmt.Sprintf("ASYNCAGENTS_API_PORT=%d", port)}, extraEnv...)
	oc := ocserve.Start(t, opts)
	e := &env{t: t, model: model, oc: oc}
	// The plugin loads on the first request for the project.
	_, err := oc.CreateSession(e.ctx(30*time.Second), "warm-up")
	require.NoError(t, err)
	st := storageOf(oc)
	var sj serverJSON
	e.eventually("server.json", 30*time.Second, func() bool {
		b, err := os.ReadFile(serverFileOf(st))
		return err == nil && json.Unmarshal(b, &sj) == nil && sj.Port == port
	})
	return e, sj
}

// sseFrame is one Server-Sent Events frame.
type sseFrame = ssetest.Frame

// eventStream is an open GET /v1/events.
type eventStream struct {
	frames <-chan sseFrame
	cancel context.CancelFunc
}

func (s *eventStream) close() { s.cancel() }

// next returns the next frame, failing t when none comes within the bound or the stream ends.
func (s *eventStream) next(t *testing.T, bound time.Duration) sseFrame {
	t.Helper()
	select {
	case f, ok := <-s.frames:
		require.True(t, ok, "the event stream ended")
		return f
	case <-time.After(bound):
		t.Fatalf("no event frame within %s", bound)
		return sseFrame{}
	}
}

// openEvents opens GET /v1/events with the token in the query, as an EventSource would. On 200
// it returns the stream (closed with the test at the latest); otherwise the status and the body.
func openEvents(t *testing.T, sj serverJSON) (*eventStream, int, http.Header, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", sj.URL+"/v1/events?token="+sj.Token, nil)
	require.NoError(t, err)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	if res.StatusCode != 200 {
		defer cancel()
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return nil, res.StatusCode, res.Header, string(body)
	}
	require.Equal(t, "text/event-stream", strings.Split(res.Header.Get("Content-Type"), ";")[0])
	frames := make(chan sseFrame, 64)
	go func() {
		defer close(frames)
		defer res.Body.Close()
		stream := ssetest.NewReader(res.Body)
		for {
			f, err := stream.Next()
			if err != nil {
				return
			}
			select {
			case frames <- f:
			case <-ctx.Done():
				return
			}
		}
	}()
	return &eventStream{frames: frames, cancel: cancel}, 200, res.Header, ""
}

// snapshotTasks decodes a snapshot frame's tasks, by ID.
func snapshotTasks(t *testing.T, f sseFrame) (map[string]map[string]any, map[string]any) {
	t.Helper()
	require.Equal(t, "snapshot", f.Event)
	var snap struct {
		Tasks []map[string]any `json:"tasks"`
		Stats map[string]any   `json:"stats"`
	}
	require.NoError(t, json.Unmarshal([]byte(f.Data), &snap), f.Data)
	byID := map[string]map[string]any{}
	for _, task := range snap.Tasks {
		byID[fmt.Sprint(task["id"])] = task
	}
	return byID, snap.Stats
}

// The subscriber limit, set through the plugin's options (api.maxSubscribers, next to the
// plugin's own token): past it /v1/events answers 503 with a JSON error, other routes still
// answer, and a closed stream makes room for a new one.
func TestStatusAPISubscriberLimit(t *testing.T) {
	e, sj := startWithAPI(t, func(req mockmodel.Request) mockmodel.Reply { return mockmodel.Reply{Text: "ok"} },
		map[string]any{"api": map[string]any{"maxSubscribers": 2}})
	first, code, _, body := openEvents(t, sj)
	require.Equal(t, 200, code, body)
	require.Equal(t, "snapshot", first.next(t, 10*time.Second).Event)
	second, code, _, body := openEvents(t, sj)
	require.Equal(t, 200, code, body)
	require.Equal(t, "snapshot", second.next(t, 10*time.Second).Event)

	_, code, header, body := openEvents(t, sj)
	require.Equal(t, 503, code, body)
	require.Equal(t, "application/json; charset=utf-8", header.Get("Content-Type"))
	var refusal struct {
		Error string `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &refusal), body)
	require.Equal(t, "too many event streams: 2 open, the limit is 2; try again later", refusal.Error)
	// The token is still the plugin's: the user's api options did not replace it.
	code, body = apiGet(t, sj.URL+"/v1/tasks", sj.Token, "")
	require.Equal(t, 200, code, body)

	first.close()
	var third *eventStream
	e.eventually("the server to count the closed stream out", 10*time.Second, func() bool {
		s, code, _, _ := openEvents(t, sj)
		third = s
		return code == 200
	})
	require.Equal(t, "snapshot", third.next(t, 10*time.Second).Event)
	require.Equal(t, "too many event streams: 2 open, the limit is 2; try again later", func() string {
		_, code, _, body := openEvents(t, sj)
		require.Equal(t, 503, code, body)
		require.NoError(t, json.Unmarshal([]byte(body), &refusal), body)
		return refusal.Error
	}(), "the limit holds again with two open")
}

// A client that reconnects gets the state it missed in the snapshot: a stream closed before a
// task starts; one opened while it runs shows it running; one opened after it ended shows it
// completed, with the stats.
func TestStatusAPIReconnect(t *testing.T) {
	e, sj := startWithAPI(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD reconnect":
			return mockmodel.Reply{Text: "reconnect result", Delay: 3 * time.Second}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "GO":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Reconnect job", "CHILD reconnect", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	}, map[string]any{})

	before, code, _, body := openEvents(t, sj)
	require.Equal(t, 200, code, body)
	tasks, _ := snapshotTasks(t, before.next(t, 10*time.Second))
	require.Empty(t, tasks)
	before.close()

	parent := e.prompt("GO")
	e.eventually("the launch answer", 60*time.Second, func() bool { return finishedParts(e.toolParts(parent, "asyncagents_task")) })
	id := idOf(e.toolParts(parent, "asyncagents_task")[0])
	during, code, _, body := openEvents(t, sj)
	require.Equal(t, 200, code, body)
	tasks, _ = snapshotTasks(t, during.next(t, 10*time.Second))
	require.Contains(t, tasks, id)
	require.Equal(t, "running", tasks[id]["status"], "reconnected while the task runs")
	during.close()

	e.eventually("the notice", 60*time.Second, func() bool { return len(e.notices(parent)) == 1 })
	after, code, _, body := openEvents(t, sj)
	require.Equal(t, 200, code, body)
	tasks, stats := snapshotTasks(t, after.next(t, 10*time.Second))
	require.Len(t, tasks, 1)
	require.Contains(t, tasks, id)
	task := tasks[id]
	require.Equal(t, "completed", task["status"])
	require.Equal(t, "Reconnect job", task["description"])
	require.Equal(t, parent, task["parentSessionID"])
	require.Contains(t, fmt.Sprint(task["result"]), "reconnect result")
	byStatus, _ := stats["byStatus"].(map[string]any)
	require.Equal(t, float64(1), byStatus["completed"], "stats: %v", stats)
	require.Equal(t, float64(0), byStatus["running"], "stats: %v", stats)
	after.close()
}
