package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
)

// A lead whose child is held (it answered while its own task runs) is cancelled: in real
// OpenCode the held step is let go with the abort (its text is stored), the child stops without
// another model turn, its session is left idle, and its own task is cancelled with it. (That no
// model call starts for a message already waiting in the child is the core's order of things,
// core/nested_turns.go holdForAbort, and its unit tests'.)
func TestACancelledHeldLeadStopsWithoutAnotherTurn(t *testing.T) {
	var leadID string
	script := func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case firstUser(req) == "CHILD slow":
			return mockmodel.Reply{Text: "never", Delay: 5 * time.Minute}
		case firstUser(req) == "CHILD lead" && lastRole(req) == "user" && req.LastUser == "CHILD lead":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Slow", "CHILD slow", "general")}}
		case firstUser(req) == "CHILD lead":
			return mockmodel.Reply{Text: "CHILD lead launched it"}
		case req.LastUser == "HELD" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Lead", "CHILD lead", "orchestrator")}}
		case req.LastUser == "CANCEL" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "asyncagents_cancel", Args: map[string]any{"task_id": leadID}}}}
		}
		return mockmodel.Reply{Text: "ok"}
	}
	e, _ := startWithConfig(t, script, withPlugin(t, orchestratorConfig))
	parent := e.prompt("HELD")
	e.eventually("the lead's launch", 60*time.Second, func() bool {
		if parts := e.toolParts(parent, "asyncagents_task"); len(parts) > 0 {
			leadID = idOf(parts[0])
		}
		return leadID != ""
	})
	child := e.sessionOf(leadID)
	e.eventually("the lead's child answered, its own task running", 60*time.Second, func() bool {
		// (The answer's text is stored once its end is answered: not while it is held.)
		return e.turnsOf("CHILD lead") == 2 && e.turnsOf("CHILD slow") == 1
	})
	time.Sleep(2 * time.Second) // a lead not held would have ended with its answer by then
	st, err := e.oc.Status(e.ctx(10 * time.Second))
	require.NoError(t, err)
	require.Contains(t, st, child, "held: its turn is not over")
	require.Equal(t, task.StatusRunning, storedTask(t, e.oc, leadID).Status, "held, not ended by its answer")
	turns := e.turnsOf("CHILD lead")
	e.waitIdle(parent)

	e.promptIn(parent, "CANCEL")
	e.eventually("the cancel answered", 30*time.Second, func() bool { return finishedParts(e.toolParts(parent, "asyncagents_cancel")) })
	require.Contains(t, e.toolParts(parent, "asyncagents_cancel")[0].State.Output, "Cancelled task "+leadID)
	e.waitIdle(child)
	// OpenCode stores the held text once its end is answered: the hold was let go (by the
	// abort's own events, or the abort's reply, whichever the core sees first).
	e.eventually("the held answer's text stored", 30*time.Second, func() bool {
		return countVisible(e, child, "CHILD lead launched it") == 1
	})
	require.Equal(t, task.StatusCancelled, storedTask(t, e.oc, leadID).Status)
	var slow string
	for _, p := range e.toolParts(child, "asyncagents_task") {
		slow = idOf(p)
	}
	require.NotEmpty(t, slow)
	e.eventually("its own task cancelled with it", 30*time.Second, func() bool {
		tk, _ := findStoredTask(e.oc, slow)
		return tk.Status == task.StatusCancelled
	})
	e.waitIdle(parent)
	require.Equal(t, turns, e.turnsOf("CHILD lead"), "no model turn of the lead's child after its cancel")
	for _, m := range e.messages(child) {
		for _, p := range m.Parts {
			require.False(t, strings.Contains(p.Text, "never"), "the slow task's result never reached it")
		}
	}
}
