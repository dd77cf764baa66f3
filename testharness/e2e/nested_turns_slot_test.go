package e2e

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// Under maxConcurrentStarts 1, a lead's child runs a native subagent that launches N and answers:
// the subagent is held, and the lead gives its slot to N. The user then aborts the subagent (its
// task left running: cancelOnParentAbort false), and the lead's child goes on. The lead waits in
// the queue for N's slot rather than take it past the limit: in real OpenCode its child's next
// answer is not stored while N runs, and once N ends the lead gets the slot and ends with it.
func TestALeadWhoseSubagentWasAbortedWaitsForItsSlotBack(t *testing.T) {
	gate := newGate(t)
	var nID atomic.Value
	script := func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case firstUser(req) == "CHILD n" && lastRole(req) == "user":
			gate.wait(90 * time.Second)
			return mockmodel.Reply{Text: "N found 7"}
		case firstUser(req) == "SUB held" && lastRole(req) == "user" && req.LastUser == "SUB held":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("N", "CHILD n", "general")}}
		case firstUser(req) == "SUB held":
			for _, m := range req.Messages { // N is queued at its launch: the lead holds the slot
				if s := taskIDLine.FindStringSubmatch(m.Content); m.Role == "tool" && s != nil {
					nID.Store(s[1])
				}
			}
			return mockmodel.Reply{Text: "SUB launched it"}
		case firstUser(req) == "CHILD lead" && lastRole(req) == "user" && req.LastUser == "CHILD lead":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "task", Args: map[string]any{"description": "sub held", "prompt": "SUB held", "subagent_type": "orchestrator"}}}}
		case firstUser(req) == "CHILD lead":
			return mockmodel.Reply{Text: "CHILD lead went on"}
		case req.LastUser == "SLOTBACK" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Lead", "CHILD lead", "orchestrator")}}
		}
		return mockmodel.Reply{Text: "ok"}
	}
	e, _ := startServing(t, script, ocserve.Options{
		Config: withPlugin(t, orchestratorConfig),
		Files:  map[string]string{".opencode/asyncagents.json": `{"maxConcurrentStarts": 1, "cancelOnParentAbort": false}`},
	})
	parent := e.prompt("SLOTBACK")
	lead := ""
	e.eventually("the lead's launch", 60*time.Second, func() bool {
		if parts := e.toolParts(parent, "asyncagents_task"); len(parts) > 0 {
			lead = idOf(parts[0])
		}
		return lead != ""
	})
	e.eventually("the subagent answered, N at work on the lead's slot", 60*time.Second, func() bool {
		return nID.Load() != nil && e.turnsOf("CHILD n") == 1
	})
	n := nID.Load().(string)
	sub := storedTask(t, e.oc, n).ParentSessionID
	child := e.sessionOf(lead)

	require.NoError(t, e.oc.Abort(e.ctx(10*time.Second), sub))
	e.eventually("the lead's child went on after its subagent's abort", 60*time.Second, func() bool {
		return e.turnsOf("CHILD lead") == 2
	})
	time.Sleep(2 * time.Second) // an answer not held would be stored by then
	require.Zero(t, countVisible(e, child, "CHILD lead went on"), "its answer waits for the slot N holds")
	require.Equal(t, task.StatusRunning, storedTask(t, e.oc, lead).Status)
	require.Equal(t, task.StatusRunning, storedTask(t, e.oc, n).Status, "N runs on: no cascade")

	gate.open()
	e.eventually("the lead ends once N's slot is its own", 60*time.Second, func() bool {
		tk, _ := findStoredTask(e.oc, lead)
		return tk.Status.Terminal()
	})
	tk := storedTask(t, e.oc, lead)
	require.Equal(t, task.StatusCompleted, tk.Status, "%+v", tk.Error)
	require.Equal(t, "CHILD lead went on", tk.Result)
	require.Equal(t, task.StatusCompleted, storedTask(t, e.oc, n).Status)
}
