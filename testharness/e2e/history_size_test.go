package e2e

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
)

// bytesPerTask sums the history lines each task got, over the project's logs.
func bytesPerTask(t *testing.T, e *env) map[string]int {
	st := storageOf(e.oc)
	logs, _ := filepath.Glob(filepath.Join(st.Dir, "history-"+st.HistoryKey+"*.log"))
	out := map[string]int{}
	for _, path := range logs {
		f, err := os.Open(path)
		require.NoError(t, err)
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<26)
		known := map[string]task.Task{}
		for sc.Scan() {
			_, body, _ := strings.Cut(sc.Text(), " ")
			if tk, _, err := storedRecord(body, known); err == nil && tk != nil {
				out[tk.ID] += len(sc.Text()) + 1
			}
		}
		f.Close()
	}
	return out
}

// A task with a 1 MB prompt writes it once: its lines come to less than 1.5 MB, though it
// has many (its session, its progress, its end, its notice accepted). Beside it, a task with a
// short prompt makes 40 tool calls. Both read back whole. (The figures go in BENCHMARKS.md.)
func TestHistoryWritesALargePromptOnce(t *testing.T) {
	const calls = 40
	big := "CHILD big " + strings.Repeat("all work and no play makes a long prompt. ", 1<<20/43)
	script := func(req mockmodel.Request) mockmodel.Reply {
		first := firstUser(req)
		switch {
		case strings.HasPrefix(first, "CHILD big"):
			return mockmodel.Reply{Text: "big done"}
		case strings.HasPrefix(first, "CHILD tools"):
			done := 0
			for _, m := range req.Messages {
				if m.Role == "tool" {
					done++
				}
			}
			if done < calls {
				return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "bash", Args: map[string]any{"command": "echo step", "description": "step"}}}}
			}
			return mockmodel.Reply{Text: "tools done"}
		case req.LastUser == "TWO" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("big", big, "general"), taskCall("tools", "CHILD tools", "general")}}
		}
		return mockmodel.Reply{Text: "ok"}
	}
	e := start(t, script)
	parent := e.prompt("TWO")
	e.eventually("both notices", 3*time.Minute, func() bool { return len(e.notices(parent)) == 2 })
	var ids []string
	for _, p := range e.toolParts(parent, "asyncagents_task") {
		ids = append(ids, idOf(p))
	}
	require.Len(t, ids, 2)
	e.eventually("both notices accepted in the history", 30*time.Second, func() bool {
		for _, id := range ids {
			if tk, ok := findStoredTask(e.oc, id); !ok || tk.NotifiedAt == 0 {
				return false
			}
		}
		return true
	})
	written := bytesPerTask(t, e)
	t.Logf("history bytes written: a task with a %d-byte prompt %d; a task with %d tool calls %d", len(big), written[ids[0]], calls, written[ids[1]])
	require.Less(t, written[ids[0]], 3*len(big)/2, "the 1 MB prompt is written once")

	bigTask, _ := findStoredTask(e.oc, ids[0])
	require.Equal(t, big, bigTask.Prompt)
	require.Equal(t, "big done", bigTask.Result)
	tools, _ := findStoredTask(e.oc, ids[1])
	require.Equal(t, "tools done", tools.Result)
	require.Equal(t, calls, tools.Progress.ToolCalls)
}
