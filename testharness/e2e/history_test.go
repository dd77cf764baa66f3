package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/internal/fixture"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// OpenCode stops (SIGTERM) with one task finished and one running, and starts again on the same
// data: the finished task's result is still there for asyncagents_output and asyncagents_list,
// and the running one is reconciled as interrupted, with its parent told.
func TestHistorySurvivesRestart(t *testing.T) {
	var ids []string
	script := func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD done":
			return mockmodel.Reply{Text: "result before the restart"}
		case req.LastUser == "CHILD hang":
			return mockmodel.Reply{Text: "never", Delay: 5 * time.Minute}
		case strings.HasPrefix(req.LastUser, "COLLECT") && lastRole(req) == "user":
			var calls []mockmodel.ToolCall
			for _, id := range ids {
				calls = append(calls, mockmodel.ToolCall{Name: "asyncagents_output", Args: map[string]any{"task_id": id}})
			}
			return mockmodel.Reply{ToolCalls: append(calls, mockmodel.ToolCall{Name: "asyncagents_list", Args: map[string]any{}})}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "TWO":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Done job", "CHILD done", "general"), taskCall("Hung job", "CHILD hang", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	}
	e := start(t, script)
	parent := e.prompt("TWO")
	e.eventually("the first notice", 60*time.Second, func() bool { return len(e.notices(parent)) == 1 })
	for _, p := range e.toolParts(parent, "asyncagents_task") {
		ids = append(ids, idOf(p))
	}
	require.Len(t, ids, 2)
	sessions := []string{e.sessionOf(ids[0]), e.sessionOf(ids[1])}

	// Restart: a new opencode serve on the same home and project.
	e.oc = ocserve.Restart(t, e.oc, ocserve.Options{ModelURL: e.model.URL(), Plugins: []string{ocserve.PluginSpec(t)}})
	// The plugin loads on the first request; it reconciles the hung task and tells the parent.
	e.eventually("the interrupted task's notice", 60*time.Second, func() bool { return len(e.notices(parent)) == 2 })
	n := e.notices(parent)[1]
	require.Regexp(t, `^✗ Agent "Hung job" failed in `, n.visible)
	require.Contains(t, n.hidden, "interrupted: OpenCode stopped while the task ran")
	e.waitIdle(parent)

	e.promptIn(parent, "COLLECT")
	e.eventually("the outputs", 60*time.Second, func() bool {
		return len(e.toolParts(parent, "asyncagents_output")) == 2 && finishedParts(e.toolParts(parent, "asyncagents_output")) &&
			finishedParts(e.toolParts(parent, "asyncagents_list"))
	})
	outs := e.toolParts(parent, "asyncagents_output")
	require.Contains(t, outs[0].State.Output, "status: completed")
	require.Contains(t, outs[0].State.Output, "<task_result>\nresult before the restart\n</task_result>")
	require.Contains(t, outs[1].State.Output, "status: error")
	require.Contains(t, outs[1].State.Output, "interrupted")
	list := e.toolParts(parent, "asyncagents_list")[0].State.Output
	require.Contains(t, list, "- "+ids[0]+" | session "+sessions[0]+" | completed |")
	require.Contains(t, list, "- "+ids[1]+" | session "+sessions[1]+" | error |")
}

// A long history (400 tasks) read line by line at one start leaves an index beside it; the next
// start reads the tasks from it, and the API and the tools give what they gave. An index that no
// longer fits (a byte of it changed here) is not used: the start reads the log whole, lists the
// same tasks, and writes a good index again.
func TestALongHistoryRestartsFromItsIndex(t *testing.T) {
	const n = 400
	port := freeTCPPort(t)
	model := mockmodel.Start(t, func(req mockmodel.Request) mockmodel.Reply { return mockmodel.Reply{Text: "ok"} })
	opts := ocserve.Options{ModelURL: model.URL(), Plugins: []string{ocserve.PluginSpec(t)}, Env: []string{fmt.Sprintf("ASYNCAGENTS_API_PORT=%d", port)}}
	e := &env{t: t, model: model, oc: ocserve.Start(t, opts)}
	st := storageOf(e.oc)
	require.NoError(t, os.MkdirAll(filepath.Dir(st.History), 0o700))
	require.NoError(t, os.WriteFile(st.History, []byte(fixture.History(n)), 0o600))

	// startListing has the plugin load (on the project's first request) and returns the load
	// line it logged once its API lists the whole history.
	startListing := func() string {
		_ = os.Remove(serverFileOf(st))
		_, err := e.oc.CreateSession(e.ctx(30*time.Second), "warm-up")
		require.NoError(t, err)
		var sj serverJSON
		e.eventually("server.json", 30*time.Second, func() bool {
			b, err := os.ReadFile(serverFileOf(st))
			return err == nil && json.Unmarshal(b, &sj) == nil && sj.Port == port
		})
		code, body := apiGet(t, sj.URL+"/v1/tasks?limit=1", sj.Token, "")
		require.Equal(t, 200, code, body)
		require.Contains(t, body, fmt.Sprintf(`"total":%d`, n))
		code, body = apiGet(t, sj.URL+"/v1/tasks/ses_hist000123", sj.Token, "")
		require.Equal(t, 200, code, body)
		require.Contains(t, body, `"result":"Findings line. Findings line.`, "a task read from the index has its whole record")
		var load string
		e.eventually("the load line", 10*time.Second, func() bool {
			for _, line := range strings.Split(e.oc.Logs(), "\n") {
				if strings.Contains(line, "core loaded") {
					load = line
				}
			}
			return load != ""
		})
		return load
	}
	waitIndex := func() string {
		var index []byte
		e.eventually("the history index", 30*time.Second, func() bool {
			b, err := os.ReadFile(ownIndex(st))
			index = b
			return err == nil && strings.HasPrefix(string(b), "asyncagents-index 2 ")
		})
		return string(index)
	}
	restart := func() {
		require.NoError(t, e.oc.Stop())
		e.oc = ocserve.Restart(t, e.oc, opts)
	}

	load := startListing()
	require.Contains(t, load, fmt.Sprintf("restored %d tasks +", n), "the first start reads the log line by line")
	index := waitIndex()

	restart()
	load = startListing()
	require.Contains(t, load, fmt.Sprintf("restored %d tasks (%d from the index) +", n, n))

	// A changed byte inside the index: its checksum fails, and the start reads the log.
	bad := []byte(index)
	bad[len(bad)/2] ^= 1
	require.NoError(t, os.WriteFile(ownIndex(st), bad, 0o600))
	restart()
	load = startListing()
	require.Contains(t, load, fmt.Sprintf("restored %d tasks +", n))
	// The index taken over with the log is the next process's: it is written again there.
	require.Equal(t, index, waitIndexChangedFrom(e, st, string(bad)), "the index is written again, as it was")
}

// waitIndexChangedFrom waits for the index file to hold something else than was, and returns it.
func waitIndexChangedFrom(e *env, st core.Storage, was string) string {
	var now string
	e.eventually("the index written again", 30*time.Second, func() bool {
		b, err := os.ReadFile(ownIndex(st))
		now = string(b)
		return err == nil && now != was
	})
	return now
}

// A log whose last line is torn (a disk full, a power loss): the process that takes it over
// ends that line before its first append, so the task it launches next is not glued to the
// fragment, and survives the next restart whole.
func TestATornLastLineLosesOnlyItself(t *testing.T) {
	const fragment = `{"torn":"a5c5`
	script := func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD next":
			return mockmodel.Reply{Text: "the next task's result"}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "ONE":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Next job", "CHILD next", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	}
	port := freeTCPPort(t)
	model := mockmodel.Start(t, script)
	opts := ocserve.Options{ModelURL: model.URL(), Plugins: []string{ocserve.PluginSpec(t)}, Env: []string{fmt.Sprintf("ASYNCAGENTS_API_PORT=%d", port)}}
	e := &env{t: t, model: model, oc: ocserve.Start(t, opts)}
	st := storageOf(e.oc)
	require.NoError(t, os.MkdirAll(filepath.Dir(st.History), 0o700))
	require.NoError(t, os.WriteFile(st.History, []byte(fixture.History(3)+fragment), 0o600))

	parent := e.prompt("ONE")
	e.eventually("the notice", 60*time.Second, func() bool { return len(e.notices(parent)) == 1 })
	parts := e.toolParts(parent, "asyncagents_task")
	require.Len(t, parts, 1)
	id := idOf(parts[0])
	logs := historyFiles(st, "log")
	require.Len(t, logs, 1, "the process took the log over")
	b, err := os.ReadFile(logs[0])
	require.NoError(t, err)
	require.Contains(t, string(b), fragment+"\n", "the torn line is ended before the first append")

	require.NoError(t, e.oc.Stop())
	e.oc = ocserve.Restart(t, e.oc, opts)
	_ = os.Remove(serverFileOf(st))
	_, err = e.oc.CreateSession(e.ctx(30*time.Second), "warm-up") // the plugin loads on it
	require.NoError(t, err)
	var sj serverJSON
	e.eventually("server.json", 30*time.Second, func() bool {
		b, err := os.ReadFile(serverFileOf(st))
		return err == nil && json.Unmarshal(b, &sj) == nil && sj.Port == port
	})
	code, body := apiGet(t, sj.URL+"/v1/tasks/"+id, sj.Token, "")
	require.Equal(t, 200, code, body)
	require.Contains(t, body, `"status":"completed"`)
	require.Contains(t, body, `"result":"the next task's result"`)
	code, body = apiGet(t, sj.URL+"/v1/tasks?limit=1", sj.Token, "")
	require.Equal(t, 200, code, body)
	require.Contains(t, body, `"total":4`, "the three tasks before the torn line and the one after it")
}
