package e2e

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// kill -9 while the plugin writes its history, a few times over: after the last restart every
// task a parent saw launched gets exactly one notice (one owed at a kill is delivered by the next
// start), every task whose ✓ notice the parent received is still completed, with its result, and
// every line of the history files is whole: each line is appended in one write(), which kill -9
// cannot tear.
func TestKill9NeverLosesAFinishedResult(t *testing.T) {
	const rounds = 4
	rng := rand.New(rand.NewSource(7))
	var mu sync.Mutex // the mock answers from several goroutines
	delay := func() time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return time.Duration(50+rng.Intn(400)) * time.Millisecond
	}
	var collect []string
	script := func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case strings.HasPrefix(req.LastUser, "CHILD "):
			return mockmodel.Reply{Text: "result of " + strings.TrimPrefix(req.LastUser, "CHILD "), Delay: delay()}
		case req.LastUser == "COLLECT" && lastRole(req) == "user":
			var calls []mockmodel.ToolCall
			for _, id := range collect {
				calls = append(calls, mockmodel.ToolCall{Name: "asyncagents_output", Args: map[string]any{"task_id": id}})
			}
			return mockmodel.Reply{ToolCalls: calls}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "ok"}
		case strings.HasPrefix(req.LastUser, "ROUND "):
			r := strings.TrimPrefix(req.LastUser, "ROUND ")
			var calls []mockmodel.ToolCall
			for i := 0; i < 4; i++ {
				calls = append(calls, taskCall(fmt.Sprintf("r%s t%d", r, i), fmt.Sprintf("r%s-t%d", r, i), "general"))
			}
			return mockmodel.Reply{ToolCalls: calls}
		}
		return mockmodel.Reply{Text: "?"}
	}
	e := start(t, script)
	taskID := regexp.MustCompile(`(?m)^task_id: (\S+)$`)
	var parents []string
	for round := 0; round < rounds; round++ {
		parent := e.prompt(fmt.Sprintf("ROUND %d", round))
		parents = append(parents, parent)
		e.eventually("a first notice", 60*time.Second, func() bool { return len(e.notices(parent)) >= 1 })
		time.Sleep(delay() - 50*time.Millisecond) // more notices and writes may be under way
		e.oc.Kill()
		e.oc = ocserve.Restart(t, e.oc, ocserve.Options{ModelURL: e.model.URL(), Plugins: []string{ocserve.PluginSpec(t)}})
	}

	// Every task a parent saw launched (its launch's answer is in the conversation) gets its
	// notice after the last restart, whatever the kills cut short, and none gets two. What the
	// user saw is read from OpenCode's own storage.
	launched := map[string][]string{} // parent -> task IDs
	for _, parent := range parents {
		for _, p := range e.toolParts(parent, "asyncagents_task") {
			if m := taskID.FindStringSubmatch(p.State.Output); p.State.Status == "completed" && m != nil {
				launched[parent] = append(launched[parent], m[1])
			}
		}
	}
	e.eventually("a notice of every task launched", 60*time.Second, func() bool {
		for parent, ids := range launched {
			for _, id := range ids {
				if e.noticesOf(parent, id) == 0 {
					return false
				}
			}
		}
		return true
	})
	finished := map[string]string{} // task ID -> result the parent was told
	exactlyOnce := func() (noticed int) {
		torn := 0
		for _, parent := range parents {
			seen := map[string]int{}
			for _, n := range e.notices(parent) {
				if n.hidden == "" {
					// OpenCode stores a message's parts one by one: a kill between the visible
					// line and the hidden text leaves the line alone. The core, finding no hidden
					// text naming the task, sends the notice whole again (counted below).
					torn++
					continue
				}
				m := taskID.FindStringSubmatch(n.hidden)
				require.NotNil(t, m, "a notice names its task: %q", n.hidden)
				seen[m[1]]++
				if strings.HasPrefix(n.visible, "✓") {
					start := strings.Index(n.hidden, "<task_result>\n") + len("<task_result>\n")
					finished[m[1]] = n.hidden[start:strings.Index(n.hidden, "\n</task_result>")]
				}
			}
			for id, c := range seen {
				require.Equal(t, 1, c, "task %s's notices in its parent", id)
			}
			noticed += len(seen)
		}
		require.LessOrEqual(t, torn, rounds, "a torn notice only where a kill fell")
		return noticed
	}
	noticed := exactlyOnce()
	require.NotEmpty(t, finished)

	// The history files themselves: no line is torn or corrupt, and each ends its last line (a
	// line written in two writes, or a newline written apart, would show here after a kill).
	home := e.oc.Home
	st := core.StoragePaths(filepath.Join(home, ".local", "share"), home, e.oc.Dir)
	var raw []byte
	for _, path := range historyFiles(st, "log") { // each OpenCode run took the log of the one before
		b, err := os.ReadFile(path)
		require.NoError(t, err, "the plugin's history file")
		if len(b) > 0 {
			require.Equal(t, byte('\n'), b[len(b)-1], "%s ends its last line", filepath.Base(path))
		}
		raw = append(raw, b...)
	}
	require.NotEmpty(t, raw, "the plugin's history file")
	res, _ := core.NewMachine(config.Config{}).Restore(time.Now().UnixMilli(), string(raw))
	require.Zero(t, res.Corrupt, "corrupt lines: %v", res.Problems)
	require.NotZero(t, res.Restored)

	// Every result the parent was told of is still there.
	for id := range finished {
		collect = append(collect, id)
	}
	collector := e.prompt("COLLECT")
	e.eventually("the outputs", 60*time.Second, func() bool {
		parts := e.toolParts(collector, "asyncagents_output")
		return len(parts) == len(collect) && finishedParts(parts)
	})
	for i, p := range e.toolParts(collector, "asyncagents_output") {
		require.Equal(t, "completed", p.State.Status, p.State.Error)
		require.Contains(t, p.State.Output, "status: completed", "task %s", collect[i])
		require.Contains(t, p.State.Output, "<task_result>\n"+finished[collect[i]]+"\n</task_result>")
	}
	// Once the restart has settled (each parent answered one more question, after anything the
	// plugin still had for it), still exactly one notice each: a late second one would show now.
	for _, parent := range parents {
		e.waitIdle(parent)
		e.settle(parent)
	}
	require.Equal(t, noticed, exactlyOnce(), "no notice came late")
	t.Logf("%d rounds, %d tasks noticed once each, %d finished results checked, %d corrupt history lines", rounds, noticed, len(finished), res.Corrupt)
}
