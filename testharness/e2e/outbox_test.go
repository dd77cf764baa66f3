package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// kill -9 OpenCode while a finished task's notice waits for its busy parent (the notice does not
// wake it: its sibling still runs): after the restart the parent gets that notice exactly once,
// and the history records that OpenCode took it.
func TestKill9WhileANoticeWaitsForABusyParent(t *testing.T) {
	e, parent, fast, slow := holdANotice(t)
	require.Zero(t, e.noticesOf(parent, fast), "the notice waits while the parent is busy")

	e.oc.Kill()
	e.oc = ocserve.Restart(t, e.oc, ocserve.Options{ModelURL: e.model.URL(), Plugins: []string{ocserve.PluginSpec(t)}})

	// Slow was cut off by the kill: the restart ends it as interrupted, and its notice wakes the
	// parent. Both notices are recorded as taken. (OpenCode loads the project, and the plugin
	// with it, at the first request for it: reading the parent's messages is that request.)
	e.eventually("both notices delivered and recorded", 60*time.Second, func() bool {
		if e.noticesOf(parent, fast) == 0 || e.noticesOf(parent, slow) == 0 {
			return false
		}
		f, _ := findStoredTask(e.oc, fast)
		s, _ := findStoredTask(e.oc, slow)
		return f.NotifiedAt != 0 && f.NoticeOwed == 0 && s.Status.Terminal() && s.NotifiedAt != 0 && s.NoticeOwed == 0
	})
	require.Equal(t, 1, e.noticesOf(parent, fast), "Fast's notice, exactly once")
	require.Equal(t, 1, e.noticesOf(parent, slow), "Slow's notice, exactly once")
	for _, n := range e.notices(parent) {
		if strings.Contains(n.hidden, "task_id: "+fast+"\n") {
			require.True(t, strings.HasPrefix(n.visible, "✓"), n.visible)
			require.Contains(t, n.hidden, "<task_result>\nfast result\n</task_result>")
		}
	}
}

// A parent deleted while the plugin was not running (here: in an OpenCode started without it)
// sends the plugin no session.deleted. After the next start, the notice it still owes that parent
// fails with OpenCode's "Session not found", and the plugin forgets the parent's tasks, as the
// event would have made it, instead of retrying at every start.
func TestANoticeToAParentDeletedWhileDownIsDropped(t *testing.T) {
	e, parent, fast, slow := holdANotice(t)
	require.Zero(t, e.noticesOf(parent, fast), "the notice waits while the parent is busy")

	e.oc.Kill()
	bare := ocserve.Restart(t, e.oc, ocserve.Options{ModelURL: e.model.URL()})
	require.NoError(t, bare.Do(e.ctx(30*time.Second), "DELETE", "/session/"+parent, nil, nil))
	e.oc = ocserve.Restart(t, bare, ocserve.Options{ModelURL: e.model.URL(), Plugins: []string{ocserve.PluginSpec(t)}})
	_, err := e.oc.CreateSession(e.ctx(30*time.Second), "loads the project, and the plugin with it")
	require.NoError(t, err)

	e.eventually("Fast and Slow forgotten", 60*time.Second, func() bool {
		h := historyText(e.oc)
		return strings.Contains(h, `"removed":"`+fast+`"`) && strings.Contains(h, `"removed":"`+slow+`"`)
	})
	// The plugin's log line reaches OpenCode's log after the history line.
	e.eventually("the log says why", 30*time.Second, func() bool {
		return strings.Contains(e.oc.Logs(), "is gone (deleted while the notices of its tasks "+fast)
	})
	require.NotContains(t, e.oc.Logs(), "trying again in", "no retry")
}

// historyText is every history log of oc's project, one after another.
func historyText(oc *ocserve.Server) string {
	st := storageOf(oc)
	logs, _ := filepath.Glob(filepath.Join(st.Dir, "history-"+st.HistoryKey+"*.log"))
	var b strings.Builder
	for _, path := range logs {
		raw, _ := os.ReadFile(path)
		b.Write(raw)
	}
	return b.String()
}

// holdANotice starts OpenCode with the plugin and a parent that launches Fast and Slow, then
// stays busy in its turn: Fast completes, and its notice (which does not wake the parent, Slow
// still running) waits, owed. Slow and the parent's turn last until the test ends OpenCode.
func holdANotice(t *testing.T) (e *env, parent, fast, slow string) {
	t.Helper()
	var mu sync.Mutex
	var launched []string // the parent's tasks, Fast then Slow, once its busy turn began
	script := func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD fast":
			return mockmodel.Reply{Text: "fast result"}
		case req.LastUser == "CHILD slow":
			return mockmodel.Reply{Text: "slow result", Delay: 10 * time.Minute} // until the kill
		case strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "noted"}
		case lastRole(req) == "tool":
			// The parent's turn after the launches: it stays busy until the kill.
			mu.Lock()
			launched = launchedIDs(req)
			mu.Unlock()
			return mockmodel.Reply{Text: "thinking", Delay: 10 * time.Minute}
		case req.LastUser == "HOLD":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Fast", "CHILD fast", "general"), taskCall("Slow", "CHILD slow", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	}
	e = start(t, script)
	parent = e.prompt("HOLD")
	e.eventually("the parent's busy turn", 60*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		if len(launched) != 2 {
			return false
		}
		fast, slow = launched[0], launched[1]
		return true
	})
	e.eventually("Fast completed, its notice owed", 60*time.Second, func() bool {
		tk, _ := findStoredTask(e.oc, fast)
		return tk.Status == task.StatusCompleted && tk.NoticeOwed != 0
	})
	return e, parent, fast, slow
}
