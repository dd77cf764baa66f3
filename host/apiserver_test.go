package host_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/abi"
	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/conformance"
	"github.com/asyncagents/asyncagents/core/httpapi"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/host"
	"github.com/asyncagents/asyncagents/host/dashboard"
)

// historyOf renders tasks as a history log, the way the core writes one (core.HistoryLine).
func historyOf(t *testing.T, tasks []json.RawMessage) string {
	var b strings.Builder
	for _, raw := range tasks {
		var task task.Task
		require.NoError(t, json.Unmarshal(raw, &task))
		b.WriteString(core.HistoryLine(task))
	}
	return b.String()
}

// TestHTTPConformanceOverNetHTTP plays core/conformance/http against the Go host's net/http
// server, over real HTTP on 127.0.0.1, with the core running as .wasm: the same cases the core
// passes natively.
func TestHTTPConformanceOverNetHTTP(t *testing.T) {
	ctx := context.Background()
	files, err := filepath.Glob(filepath.Join("..", "core", "conformance", "http", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	sort.Strings(files)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			require.NoError(t, err)
			var f struct {
				Tasks  []json.RawMessage `json:"tasks"`
				Config config.APIConfig  `json:"config"`
				Now    int64             `json:"now"`
				Cases  []struct {
					Note    string          `json:"note"`
					Request httpapi.Request `json:"request"`
					Expect  map[string]any  `json:"expect"`
					Save    []string        `json:"save"`
				} `json:"cases"`
			}
			require.NoError(t, json.Unmarshal(raw, &f))
			inst, err := compiled(t).New(ctx)
			require.NoError(t, err)
			defer inst.Close(ctx)
			_, err = inst.Init(ctx, config.Config{API: f.Config, MaxConcurrentStarts: 1000})
			require.NoError(t, err)
			_, err = inst.Do(ctx, abi.Request{Op: "restore", Now: f.Now, History: historyOf(t, f.Tasks)})
			require.NoError(t, err)
			logs := func(context.Context, string) ([]byte, error) { return []byte("[]"), nil }
			srv := httptest.NewServer(&host.APIServer{Core: inst, Now: func() int64 { return f.Now }, Logs: logs})
			defer srv.Close()
			port := srv.Listener.Addr().(*net.TCPAddr).Port
			// A redirect (the dashboard's /?token=) is what is checked, not followed.
			client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			// {port} in a case is this server's own port (httpapi.PortInHeaders), in its
			// expectations too.
			require.NoError(t, json.Unmarshal([]byte(strings.ReplaceAll(string(raw), "{port}", strconv.Itoa(port))), &f))
			ran := 0
			saved := httpapi.Saved{}
			for i, c := range f.Cases {
				c.Request = saved.Into(c.Request)
				skip := ""
				switch {
				case c.Expect["stream"] == true || strings.HasPrefix(c.Request.Path, "/v1/events") || c.Request.Subscribers > 0:
					skip = "a stream or the subscriber limit (TestEventStreamOverNetHTTP)"
				case c.Request.Headers["host"] == "":
					skip = "no Host, which an HTTP/1.1 client cannot send"
				}
				if _, err := neturl.PathUnescape(c.Request.Path + c.Request.Query); err != nil {
					skip = "a malformed escape, which Go's client cannot send (the core's own run covers it)"
				}
				if skip != "" {
					t.Logf("case %d (%s) not sent over net/http: %s", i, c.Note, skip)
					continue
				}
				_, hasStatus := c.Expect["status"].(float64)
				_, hasHeaders := c.Expect["headers"].(map[string]any)
				_, hasBody := c.Expect["bodyJSON"]
				require.True(t, hasStatus || hasHeaders || hasBody, "case %d (%s) expects nothing: it could not fail", i, c.Note)
				ran++
				url := srv.URL + c.Request.Path
				if c.Request.Query != "" {
					url += "?" + c.Request.Query
				}
				var reqBody io.Reader
				if c.Request.Body != "" {
					reqBody = strings.NewReader(c.Request.Body)
				}
				req, err := http.NewRequest(c.Request.Method, url, reqBody)
				require.NoError(t, err)
				for k, v := range httpapi.PortInHeaders(c.Request, port).Headers {
					if k == "host" {
						req.Host = v
					} else {
						req.Header.Set(k, v)
					}
				}
				res, err := client.Do(req)
				require.NoError(t, err)
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if st, ok := c.Expect["status"].(float64); ok {
					require.Equal(t, int(st), res.StatusCode, "case %d (%s): %s", i, c.Note, body)
				}
				if hw, ok := c.Expect["headers"].(map[string]any); ok {
					got := map[string]any{}
					for k := range hw {
						if vs := res.Header.Values(k); len(vs) > 0 {
							got[k] = vs[0]
						}
					}
					require.NoError(t, conformance.Match(hw, got, "headers"), "case %d (%s)", i, c.Note)
				}
				if c.Expect["asset"] == httpapi.DashboardAsset {
					require.Equal(t, string(dashboard.Page), string(body), "case %d (%s): the page", i, c.Note)
				}
				if bw, ok := c.Expect["bodyJSON"]; ok {
					var got any
					require.NoError(t, json.Unmarshal(body, &got), "case %d (%s): %s", i, c.Note, body)
					require.NoError(t, conformance.Match(bw, got, "body"), "case %d (%s)", i, c.Note)
				}
				require.NoError(t, saved.Take(c.Save, body), "case %d (%s)", i, c.Note)
			}
			t.Logf("%d of %d cases sent over net/http", ran, len(f.Cases))
			require.Positive(t, ran, "every case of the file was skipped")
		})
	}
}

// An event stream over net/http: the snapshot first, then broadcast frames; a subscriber that
// stops reading is dropped without holding up the broadcaster.
func TestEventStreamOverNetHTTP(t *testing.T) {
	inst := openInstance(t)
	api := &host.APIServer{Core: inst, Now: func() int64 { return 1000 }}
	srv := httptest.NewServer(api)
	defer srv.Close()
	res, err := http.Get(srv.URL + "/v1/events")
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, 200, res.StatusCode)
	buf := make([]byte, 4096)
	n, _ := res.Body.Read(buf)
	require.Contains(t, string(buf[:n]), "event: snapshot\n")

	// A stalled subscriber: never reads. Broadcasting past its buffer must not block; the
	// subscriber that reads gets every frame, the last one included.
	stalled, err := http.Get(srv.URL + "/v1/events")
	require.NoError(t, err)
	defer stalled.Body.Close()
	var read atomic.Int64 // heartbeats the reading subscriber has seen
	done := make(chan string, 1)
	go func() {
		got := ""
		for !strings.Contains(got, "1970-01-01T00:00:00.999Z") {
			n, err := res.Body.Read(buf)
			if err != nil {
				break
			}
			got += string(buf[:n])
			read.Store(int64(strings.Count(got, "event: heartbeat\n")))
		}
		done <- got
	}()
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; i < 1000; i++ {
		// Paced so that the reader, not the broadcaster, sets the speed: it stays within its buffer.
		for int64(i)-read.Load() > 32 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		api.Broadcast(httpapi.HeartbeatFrame(int64(i)))
	}
	var got string
	select {
	case got = <-done:
	case <-time.After(time.Until(deadline) + time.Second):
		t.Fatal("the reading subscriber's stream stalled")
	}
	require.Contains(t, got, "1970-01-01T00:00:00.999Z", "the reading subscriber got the last frame")
	require.Equal(t, 1000, strings.Count(got, "event: heartbeat\n"), "and every frame before it")
}
