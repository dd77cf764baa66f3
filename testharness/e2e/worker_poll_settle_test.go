package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
)

// toolTurns is how many tool results a model request carries: the steps its session made.
func toolTurns(req mockmodel.Request) int {
	n := 0
	for _, m := range req.Messages {
		if m.Role == "tool" {
			n++
		}
	}
	return n
}

// A task on a polled worker, cancelled between two of its progress reads: its child made two
// steps since the first read and was at work on a third. No stream told the parent of them, and
// no progress read came before the cancel; a second after it, the child's whole conversation is
// read, and the ended task's record counts both steps and what they spent.
func TestACancelledPolledTaskCountsItsLastSteps(t *testing.T) {
	glob := []mockmodel.ToolCall{{Name: "glob", Args: map[string]any{"pattern": "*.md"}}}
	f := startFleet(t, childScript(map[string]func(mockmodel.Request) mockmodel.Reply{
		"CHILD spends": func(r mockmodel.Request) mockmodel.Reply {
			switch toolTurns(r) {
			case 0: // past the first progress read, which comes at the first poll that finds it busy
				return mockmodel.Reply{Text: "step one", ToolCalls: glob, Delay: 1500 * time.Millisecond}
			case 1:
				return mockmodel.Reply{Text: "step two", ToolCalls: glob}
			}
			return mockmodel.Reply{Text: "never", Delay: stallLong}
		},
	}, map[string][]mockmodel.ToolCall{"LAUNCH": {remoteCall("Spends", "CHILD spends", "w1")}}),
		fleetOptions{workers: 1, worker: map[string]any{"pollMs": 500}})
	f.waitWorkersUp()
	parent := f.prompt("LAUNCH")
	id := f.launchedTasks(parent, 1)[0]
	_, err := f.model.WaitFor(f.ctx(90*time.Second), func(r mockmodel.Request) bool {
		return firstUser(r) == "CHILD spends" && toolTurns(r) == 2
	})
	require.NoError(t, err, "the child at its third step")

	sj := f.api()
	code, body := apiPost(t, sj.URL+"/v1/tasks/"+id+"/cancel", sj.Token, sj.Port)
	require.Equal(t, 200, code, body)
	var tk task.Task
	f.eventually("the cancelled task's two steps counted", 30*time.Second, func() bool {
		tk, _ = findStoredTask(f.oc, id)
		return tk.Status == task.StatusCancelled && tk.Steps == 2
	})
	require.Equal(t, "w1", tk.Worker)
	tokens, _ := tk.Usage()
	require.Positive(t, tokens.Input, "what the two steps spent")
	require.NotEmpty(t, tk.UsageMark(tk.SessionID).Message, "the child's messages marked as counted")
}
