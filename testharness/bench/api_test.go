package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/internal/fixture"
	"github.com/asyncagents/asyncagents/internal/ssetest"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// historyTasks is the size of the stored history the status API figures are measured over
// (ASYNCAGENTS_BENCH_HISTORY overrides it).
var historyTasks = func() int {
	if n, err := strconv.Atoi(os.Getenv("ASYNCAGENTS_BENCH_HISTORY")); err == nil && n > 0 {
		return n
	}
	return 10_000
}()

// subscribers is how many event streams watch one task change (ASYNCAGENTS_BENCH_STREAMS
// overrides it, to see how the delay grows with them).
var subscribers = func() int {
	if n, err := strconv.Atoi(os.Getenv("ASYNCAGENTS_BENCH_STREAMS")); err == nil && n > 0 {
		return n
	}
	return 100
}()

func freePort(b *testing.B) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// get answers one authorised GET, reading the whole body.
func get(client *http.Client, url, token string) (int, []byte, error) {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	return res.StatusCode, body, err
}

// latencies times n sequential GETs of url (keep-alive), in ms.
func latencies(b *testing.B, client *http.Client, url, token string, n int) []float64 {
	return latenciesOf(b, client, func(int) string { return url }, token, n)
}

// latenciesOf times n sequential GETs of url(i) (keep-alive), in ms.
func latenciesOf(b *testing.B, client *http.Client, urlOf func(i int) string, token string, n int) []float64 {
	out := make([]float64, 0, n)
	for i := 0; i < n; i++ {
		url := urlOf(i)
		t0 := time.Now()
		code, body, err := get(client, url, token)
		if err != nil || code != 200 {
			b.Fatalf("GET %s: %d %v %s", url, code, err, body)
		}
		out = append(out, float64(time.Since(t0).Microseconds())/1000)
	}
	return out
}

func percentile(xs []float64, p float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(p*float64(len(s))+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

// BenchmarkStatusAPI measures the status API against its targets (BENCHMARKS.md) on the plugin's
// server inside a real `opencode serve`, over a stored history of 10,000 tasks: the time from the
// plugin's start to the API's first answer, GET /v1/tasks latency, one task change reaching 100
// event streams, and the history lines one task writes. Native OpenCode has no status API to compare with.
func BenchmarkStatusAPI(b *testing.B) {
	for i := 0; i < b.N; i++ {
		model := mockmodel.Start(b, func(req mockmodel.Request) mockmodel.Reply {
			switch {
			case req.LastUser == "CHILD":
				return mockmodel.Reply{Text: "child result", Delay: 300 * time.Millisecond}
			case req.LastUser == "GO" && len(req.Messages) == 1:
				return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "asyncagents_task", Args: map[string]any{"description": "Watched job", "prompt": "CHILD", "agent": "general"}}}}
			}
			return mockmodel.Reply{Text: "ok"}
		})
		port := freePort(b)
		opts := ocserve.Options{ModelURL: model.URL(), Plugins: []string{ocserve.PluginSpec(b)}, LogLevel: "INFO",
			Env: []string{"ASYNCAGENTS_API_PORT=" + strconv.Itoa(port)}}
		oc := ocserve.Start(b, opts)
		st := core.StoragePaths(filepath.Join(oc.Home, ".local", "share"), oc.Home, oc.Dir)
		if err := os.MkdirAll(filepath.Dir(st.History), 0o700); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(st.History, []byte(fixture.History(historyTasks)), 0o600); err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		client := &http.Client{Timeout: 10 * time.Second}
		// The first start reads the history line by line, as after an upgrade, and leaves the
		// index its restarts read (history_index.go), a little after its restore.
		firstStart, _ := startListing(b, ctx, client, oc, st)
		deadline := time.Now().Add(30 * time.Second)
		for ownFile(st, "idx") == "" {
			if time.Now().After(deadline) {
				b.Fatalf("the plugin wrote no history index\n%s", oc.Logs())
			}
			time.Sleep(100 * time.Millisecond)
		}
		firstLogs := oc.Logs()
		if err := oc.Stop(); err != nil {
			b.Fatalf("stop: %v", err)
		}
		_ = os.Remove(serverFileOf(st)) // the stopped plugin's, if it left one
		oc = ocserve.Restart(b, oc, opts)
		restart, sj := startListing(b, ctx, client, oc, st)

		// GET /v1/tasks over 10,000 tasks, the default page: the first 1,000 calls after the API
		// answered (OpenCode is still settling, and JavaScriptCore still compiling the module's hot
		// code), then 1,000 calls in steady state, after 2,000 more.
		cold := latencies(b, client, sj.URL+"/v1/tasks", sj.Token, 1000)
		latencies(b, client, sj.URL+"/v1/tasks", sj.Token, 2000)
		lat := latencies(b, client, sj.URL+"/v1/tasks", sj.Token, 1000)
		// Each request a page not asked for lately, so the core computes every answer afresh (its
		// cache keeps the last 32 answers while no task changes): the cost while tasks are at work.
		fresh := latenciesOf(b, client, func(i int) string { return fmt.Sprintf("%s/v1/tasks?offset=%d", sj.URL, i%500) }, sj.Token, 1000)
		search := latenciesOf(b, client, func(i int) string {
			return fmt.Sprintf("%s/v1/tasks?status=completed&search=module&offset=%d", sj.URL, 9000+i%500)
		}, sj.Token, 300)
		// The cheapest route, to tell the server's own tail (OpenCode's event loop, which the
		// plugin shares) from the work of listing tasks.
		health := latencies(b, client, sj.URL+"/v1/health", sj.Token, 1000)

		// 100 event streams, then one task's life; each stream times the completion's frame.
		var wg sync.WaitGroup
		ready := make(chan struct{}, subscribers)
		deltas := make(chan float64, subscribers)
		for s := 0; s < subscribers; s++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequestWithContext(ctx, "GET", sj.URL+"/v1/events?token="+sj.Token, nil)
				res, err := http.DefaultClient.Do(req)
				if err != nil || res.StatusCode != 200 {
					ready <- struct{}{}
					return
				}
				defer res.Body.Close()
				frames := ssetest.NewReader(res.Body)
				first := true
				for {
					f, err := frames.Next()
					if err != nil {
						return
					}
					if first && f.Data != "" {
						first = false
						ready <- struct{}{}
					}
					if f.Event == "task.completed" {
						at := time.Now()
						var t struct {
							CompletedAt int64 `json:"completedAt"` // Unix ms, the core's clock at the change
						}
						_ = json.Unmarshal([]byte(f.Data), &t)
						deltas <- float64(at.UnixMicro()-t.CompletedAt*1000) / 1000
						return
					}
				}
			}()
		}
		for s := 0; s < subscribers; s++ {
			select {
			case <-ready:
			case <-ctx.Done():
				b.Fatal("the streams did not open")
			}
		}
		before, _ := os.ReadFile(ownFile(st, "log"))
		sess, err := oc.CreateSession(ctx, "parent")
		if err != nil {
			b.Fatal(err)
		}
		if err := oc.PromptAsync(ctx, sess, "build", "GO"); err != nil {
			b.Fatal(err)
		}
		wg.Wait()
		close(deltas)
		var sse []float64
		for d := range deltas {
			sse = append(sse, d)
		}
		if len(sse) != subscribers {
			b.Fatalf("%d of %d streams saw the completion\n%s", len(sse), subscribers, oc.Logs())
		}
		time.Sleep(500 * time.Millisecond) // the task's last change (the notice) lands
		after, _ := os.ReadFile(ownFile(st, "log"))
		linesPerTask := strings.Count(string(after[min(len(before), len(after)):]), "\n")
		logs := oc.Logs()
		cancel()
		if err := oc.Stop(); err != nil {
			b.Fatalf("stop: %v", err)
		}

		b.ReportMetric(restart, "restart-10k-ms")
		b.ReportMetric(firstStart, "first-start-10k-ms")
		b.ReportMetric(percentile(lat, 0.99), "tasks-p99-ms")
		b.ReportMetric(percentile(fresh, 0.99), "tasks-uncached-p99-ms")
		b.ReportMetric(percentile(sse, 1), "sse-100-max-ms")
		b.ReportMetric(float64(linesPerTask), "history-lines-per-task")
		fmt.Printf("\nstatus API in OpenCode (plugin, Bun.serve), %d tasks in history:\n", historyTasks)
		fmt.Println("| figure | measured | target |")
		fmt.Println("| --- | --- | --- |")
		fmt.Printf("| plugin start -> API lists the history (a restart: the index the last start left) | %.0f ms | ≤ 300 ms |\n", restart)
		fmt.Printf("| plugin start -> API lists the history (no index: the first start after an upgrade) | %.0f ms | |\n", firstStart)
		fmt.Printf("| GET /v1/tasks p50 / p99, the first 1000 calls after start | %.2f / %.2f ms | |\n", percentile(cold, 0.5), percentile(cold, 0.99))
		fmt.Printf("| GET /v1/tasks p50 / p99, 1000 calls in steady state | %.2f / %.2f ms | p99 ≤ 5 ms |\n", percentile(lat, 0.5), percentile(lat, 0.99))
		fmt.Printf("| GET /v1/tasks?offset=N, a new page each time (no cache) p50 / p99 | %.2f / %.2f ms | |\n", percentile(fresh, 0.5), percentile(fresh, 0.99))
		fmt.Printf("| GET /v1/tasks?status&search&offset=9000+N (no cache) p50 / p99 | %.2f / %.2f ms | |\n", percentile(search, 0.5), percentile(search, 0.99))
		fmt.Printf("| GET /v1/health p50 / p99 (the server's floor) | %.2f / %.2f ms | |\n", percentile(health, 0.5), percentile(health, 0.99))
		fmt.Printf("| task completed -> frame at %d streams, median / max | %.0f / %.0f ms | ≤ 20 ms |\n", subscribers, percentile(sse, 0.5), percentile(sse, 1))
		fmt.Printf("| history lines written by one task's whole life | %d | constant |\n", linesPerTask)
		// Where the start's time went, as the plugin logged it.
		for _, line := range strings.Split(firstLogs+"\n"+logs, "\n") {
			if i := strings.Index(line, "core loaded"); i >= 0 {
				fmt.Println("plugin's load:", strings.TrimRight(line[i:], `"`))
			}
		}
	}
}

// startListing waits for a starting OpenCode's plugin to list the whole history over its API, and
// returns how long that took from the plugin's start, with the server.json it wrote. The plugin
// loads on the project's first request; it binds, then restores the history.
func startListing(b *testing.B, ctx context.Context, client *http.Client, oc *ocserve.Server, st core.Storage) (float64, serverJSON) {
	go func() { _, _ = oc.CreateSession(ctx, "warm-up") }()
	var sj serverJSON
	deadline := time.Now().Add(time.Minute)
	for {
		if raw, err := os.ReadFile(serverFileOf(st)); err == nil && json.Unmarshal(raw, &sj) == nil && sj.URL != "" {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("no server.json\n%s", oc.Logs())
		}
		time.Sleep(2 * time.Millisecond)
	}
	for {
		code, body, err := get(client, sj.URL+"/v1/tasks?limit=1", sj.Token)
		if err == nil && code == 200 && strings.Contains(string(body), fmt.Sprintf(`"total":%d`, historyTasks)) {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("the API never listed the history: %d %v %s", code, err, body)
		}
		time.Sleep(2 * time.Millisecond)
	}
	answered := time.Now()
	started, err := time.Parse(time.RFC3339Nano, sj.StartedAt)
	if err != nil {
		b.Fatalf("startedAt %q: %v", sj.StartedAt, err)
	}
	return float64(answered.Sub(started).Microseconds()) / 1000, sj
}

// serverFileOf is the project's server file (servers-<key>/<pid>.json; one OpenCode, one file).
func serverFileOf(st core.Storage) string {
	found, _ := filepath.Glob(filepath.Join(st.ServerDir, "*.json"))
	if len(found) == 0 {
		return filepath.Join(st.ServerDir, "none.json")
	}
	return found[0]
}

// serverJSON is the status API's discovery file.
type serverJSON struct{ URL, Token, StartedAt string }

// BenchmarkServeCLI measures `asyncagents serve` (the Go host, core under wazero) over the same
// 10,000-task history: process start until the API lists it, and GET /v1/tasks latency.
func BenchmarkServeCLI(b *testing.B) {
	root := ocserve.RepoRoot(b)
	bin := filepath.Join(root, "dist", "asyncagents")
	home := b.TempDir()
	project := filepath.Join(home, "project")
	st := core.StoragePaths(filepath.Join(home, "data"), home, project)
	if err := os.MkdirAll(filepath.Dir(st.History), 0o700); err != nil {
		b.Fatal(err)
	}
	history := fixture.History(historyTasks)
	if err := os.WriteFile(st.History, []byte(history), 0o600); err != nil {
		b.Fatal(err)
	}
	// The index the plugin leaves beside the history it restored: serve reads, never writes it.
	withIndex := os.Getenv("ASYNCAGENTS_BENCH_NO_INDEX") == ""
	if withIndex {
		if err := os.WriteFile(st.HistoryIndex, []byte(fixture.HistoryIndex(history)), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	once := func() (startMs float64, lat []float64) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "serve", "--dir", project, "--port", strconv.Itoa(freePort(b)))
		cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+filepath.Join(home, "data"), "HOME="+home)
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		defer func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }()
		rd := bufio.NewReader(out)
		first, err1 := rd.ReadString('\n')
		second, err2 := rd.ReadString('\n')
		go func() { _, _ = io.Copy(io.Discard, rd) }()
		i := strings.Index(first, " at ")
		if err1 != nil || err2 != nil || i < 0 {
			b.Fatalf("serve printed %q %q", first, second)
		}
		url := strings.Fields(first[i+4:])[0]
		token := strings.TrimSpace(strings.TrimPrefix(second, "token:"))
		client := &http.Client{Timeout: 10 * time.Second}
		for {
			code, _, err := get(client, url+"/v1/tasks?limit=1", token)
			if err == nil && code == 200 {
				break
			}
			if ctx.Err() != nil {
				b.Fatal("serve never answered")
			}
			time.Sleep(2 * time.Millisecond)
		}
		startMs = float64(time.Since(t0).Microseconds()) / 1000
		return startMs, latencies(b, client, url+"/v1/tasks", token, 1000)
	}
	for i := 0; i < b.N; i++ {
		once() // the first start compiles the module into the on-disk cache
		var starts []float64
		var lat []float64
		for r := 0; r < 5; r++ {
			s, l := once()
			starts = append(starts, s)
			lat = append(lat, l...)
		}
		b.ReportMetric(median(starts), "serve-start-10k-ms")
		b.ReportMetric(percentile(lat, 0.99), "serve-tasks-p99-ms")
		index := "with the plugin's index"
		if !withIndex {
			index = "no index"
		}
		fmt.Printf("\n`asyncagents serve` (Go host, wazero), %d tasks in history (%s): process start -> API lists them %.0f ms (median of 5, compiled module cached); GET /v1/tasks p50 / p99 %.2f / %.2f ms\n",
			historyTasks, index, median(starts), percentile(lat, 0.5), percentile(lat, 0.99))
	}
}

// ownFile is the log (ext "log") or index ("idx") of the process that took the project's
// history over (core/history_files.go: history-<key>.<owner>.<ext>); "" while there is none.
func ownFile(st core.Storage, ext string) string {
	found, _ := filepath.Glob(filepath.Join(st.Dir, "history-"+st.HistoryKey+".*."+ext))
	if len(found) == 0 {
		return ""
	}
	return found[0]
}
