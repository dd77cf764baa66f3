package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// Two OpenCode processes on one project, each launching 10 tasks at once: the history (one log
// per process) holds all 20, with no torn line, and each process's status API lists all 20. Then
// process B restarts while a task of A's runs: B lists it, and neither B's restore nor its polls
// mark it failed; it is still running in A's log and finishes there.
func TestTwoProcessesOneHistory(t *testing.T) {
	release := newGate(t)
	script := func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case strings.HasPrefix(req.LastUser, "CHILD hang"):
			release.wait(3 * time.Minute)
			return mockmodel.Reply{Text: "hang result"}
		case strings.HasPrefix(req.LastUser, "CHILD "):
			return mockmodel.Reply{Text: "result of " + strings.TrimPrefix(req.LastUser, "CHILD "), Delay: 300 * time.Millisecond}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "ok"}
		case strings.HasPrefix(req.LastUser, "FAN "):
			who := strings.TrimPrefix(req.LastUser, "FAN ")
			var calls []mockmodel.ToolCall
			for i := range 10 {
				calls = append(calls, taskCall(fmt.Sprintf("Job %s%d", who, i), fmt.Sprintf("CHILD %s%d", who, i), "general"))
			}
			return mockmodel.Reply{ToolCalls: calls}
		case req.LastUser == "HANG":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Long job", "CHILD hang", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	}
	model := mockmodel.Start(t, script)
	opts := func(port int) ocserve.Options {
		return ocserve.Options{ModelURL: model.URL(), Plugins: []string{ocserve.PluginSpec(t)}, Env: []string{fmt.Sprintf("ASYNCAGENTS_API_PORT=%d", port)}}
	}
	// Each process's API is found by its own server file, not by the port asked for: a port free
	// when picked may be OpenCode's own by the time the plugin binds, and it takes the next.
	ports := []int{freeTCPPort(t), freeTCPPort(t)}
	a := &env{t: t, model: model, oc: ocserve.Start(t, opts(ports[0]))}
	b := &env{t: t, model: model, oc: ocserve.Beside(t, a.oc, opts(ports[1]))}
	st := storageOf(a.oc)
	// Each plugin loads on its process's first request. (Two OpenCode processes share one SQLite
	// database: requests made while both start up met "database is locked" in OpenCode itself.)
	for i, e := range []*env{a, b} {
		_, err := e.oc.CreateSession(e.ctx(30*time.Second), "warm-up")
		require.NoError(t, err)
		e.eventually(fmt.Sprintf("process %d's plugin to load", i), 30*time.Second, func() bool { return strings.Contains(e.oc.Logs(), "asyncagents: core loaded") })
	}

	// Both at once: each parent launches 10 tasks in one turn.
	parents := make([]string, 2)
	done := make(chan int, 2)
	for i, e := range []*env{a, b} {
		go func() {
			defer func() { done <- i }()
			ctx := e.ctx(60 * time.Second)
			id, err := e.oc.CreateSession(ctx, "parent")
			if err == nil {
				err = e.oc.PromptAsync(ctx, id, "build", "FAN "+string(rune('A'+i)))
			}
			if err != nil {
				t.Errorf("process %d: %v", i, err)
			}
			parents[i] = id
		}()
	}
	for range 2 {
		select {
		case <-done:
		case <-time.After(90 * time.Second):
			t.Fatal("timed out launching the two fan-outs")
		}
	}
	require.False(t, t.Failed())
	for i, e := range []*env{a, b} {
		e.eventually(fmt.Sprintf("process %d's ten notices", i), 120*time.Second, func() bool { return len(e.notices(parents[i])) == 10 })
	}

	// The history: every line whole, 20 tasks, each completed, each process's in its own log.
	records := historyRecords(t, st)
	require.Len(t, records, 20)
	for id, tk := range records {
		require.Equal(t, task.StatusCompleted, tk.Status, "task %s", id)
	}
	logs := historyLogs(t, st)
	require.Len(t, logs, 2, "one log per process: %v", logs)

	// Each process's status API lists all 20, completed.
	for i, e := range []*env{a, b} {
		a.eventually(fmt.Sprintf("process %d's API to list all 20", i), 30*time.Second, func() bool {
			tasks := apiTasks(t, st, e.oc)
			return len(tasks) == 20 && countStatus(tasks, task.StatusCompleted) == 20
		})
	}

	// A launches a task that keeps running; B restarts meanwhile.
	hangParent := a.prompt("HANG")
	a.eventually("the long task to run", 60*time.Second, func() bool { return len(a.toolParts(hangParent, "asyncagents_task")) == 1 })
	hangID := idOf(a.toolParts(hangParent, "asyncagents_task")[0])
	a.sessionOf(hangID)
	b.oc = ocserve.Restart(t, b.oc, opts(ports[1]))
	if _, err := b.oc.CreateSession(b.ctx(30*time.Second), "warm-up"); err != nil { // the plugin loads on the first request
		t.Fatal(err)
	}
	b.eventually("B's API after its restart to list A's running task", 60*time.Second, func() bool {
		tasks := apiTasks(t, st, b.oc)
		return len(tasks) == 21 && statusOf(tasks, hangID) == task.StatusRunning
	})
	// B's restore is done (its load line) and restored B's own ten tasks alone, all finished: A's
	// running task is none of those B reconciles, and B, running nothing, polls nothing. A's task
	// is still running everywhere.
	var load string
	b.eventually("B's load line after its restart", 30*time.Second, func() bool {
		for _, line := range strings.Split(b.oc.Logs(), "\n") {
			if strings.Contains(line, "asyncagents: core loaded") {
				load = line
			}
		}
		return load != ""
	})
	require.Contains(t, load, "restored 10 tasks", "B restores its own log alone")
	require.Equal(t, task.StatusRunning, historyRecords(t, st)[hangID].Status)
	require.Equal(t, task.StatusRunning, statusOf(apiTasks(t, st, b.oc), hangID))
	require.Equal(t, task.StatusRunning, statusOf(apiTasks(t, st, a.oc), hangID))
	bPort, bToken := apiOf(st, b.oc)
	code, body := apiPost(t, fmt.Sprintf("http://127.0.0.1:%d/v1/tasks/%s/cancel", bPort, hangID), bToken, bPort)
	require.Equal(t, 409, code, "B may not cancel A's task: %s", body)
	require.NotContains(t, b.oc.Logs(), hangID+" interrupted")

	// A finishes it; both list it completed, and the history has 21 tasks, all whole.
	release.open()
	a.eventually("the long task's notice", 60*time.Second, func() bool { return len(a.notices(hangParent)) == 1 })
	for i, e := range []*env{a, b} {
		a.eventually(fmt.Sprintf("process %d's API to list the long task completed", i), 30*time.Second, func() bool {
			return statusOf(apiTasks(t, st, e.oc), hangID) == task.StatusCompleted
		})
	}
	records = historyRecords(t, st)
	require.Len(t, records, 21)
	require.Equal(t, task.StatusCompleted, records[hangID].Status)
	require.NotContains(t, a.notices(hangParent)[0].visible, "failed")
}

// historyLogs lists the project's logs (core/history_files.go: history-<key>[.<owner>].log).
func historyLogs(t *testing.T, st core.Storage) []string { return historyFiles(st, "log") }

// historyFiles lists the project's logs (ext "log") or their indexes ("idx"), one per process
// that wrote them.
func historyFiles(st core.Storage, ext string) []string {
	found, _ := filepath.Glob(filepath.Join(st.Dir, "history-"+st.HistoryKey+"*."+ext))
	sort.Strings(found)
	return found
}

// ownIndex is the index of the one process that served the project ("" while there is none).
func ownIndex(st core.Storage) string {
	if found := historyFiles(st, "idx"); len(found) == 1 {
		return found[0]
	}
	return ""
}

// historyRecords reads every log of the project and returns each task's latest record; a line
// that is not whole (its checksum does not match its JSON) fails the test.
func historyRecords(t *testing.T, st core.Storage) map[string]task.Task {
	out := map[string]task.Task{}
	for _, path := range historyLogs(t, st) {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		text := string(b)
		require.True(t, text == "" || strings.HasSuffix(text, "\n"), "%s ends its last line", path)
		for n, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
			if line == "" {
				continue
			}
			_, body, ok := strings.Cut(line, " ")
			require.True(t, ok, "%s line %d: %q", path, n+1, line)
			require.Equal(t, line+"\n", core.ChecksummedLine(body), "%s line %d is torn", path, n+1)
			_, _, err := storedRecord(body, out)
			require.NoError(t, err)
		}
	}
	return out
}

// tokenOf is the token in the server file of the process listening on port.
// apiOf is the status API of the plugin inside oc, as its own server file gives it: its port
// (ASYNCAGENTS_API_PORT, or the next free one) and its token; 0 and "" while the file is missing.
func apiOf(st core.Storage, oc *ocserve.Server) (port int, token string) {
	var sj serverJSON
	b, err := os.ReadFile(core.ServerFilePath(st.ServerDir, oc.PID()))
	if err != nil || json.Unmarshal(b, &sj) != nil {
		return 0, ""
	}
	return sj.Port, sj.Token
}

// apiTasks lists the tasks the status API of the plugin inside oc gives (nil while its server
// file is missing).
func apiTasks(t *testing.T, st core.Storage, oc *ocserve.Server) []task.Task {
	port, token := apiOf(st, oc)
	if token == "" {
		return nil
	}
	code, body := apiGet(t, fmt.Sprintf("http://127.0.0.1:%d/v1/tasks?limit=100", port), token, "")
	if code != 200 {
		return nil
	}
	var page struct {
		Tasks []task.Task `json:"tasks"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &page))
	return page.Tasks
}

func countStatus(tasks []task.Task, s task.Status) int {
	n := 0
	for _, tk := range tasks {
		if tk.Status == s {
			n++
		}
	}
	return n
}

func statusOf(tasks []task.Task, id string) task.Status {
	for _, tk := range tasks {
		if tk.ID == id {
			return tk.Status
		}
	}
	return ""
}

// apiPost sends a POST as the status API's own dashboard would (its Origin), with the token.
func apiPost(t *testing.T, url, token string, port int) (int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST", url, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Origin", fmt.Sprintf("http://127.0.0.1:%d", port))
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(b)
}
