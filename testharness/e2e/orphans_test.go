package e2e

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
)

// A lead whose own model fails after it launched a task of its own: in real OpenCode the lead
// fails, its slow task is cancelled with it (its child's model call cut), and the lead's child
// gets no further model turn from that task's notice. Left running, the slow task's end would
// have woken the failed lead for an answer no one reads.
func TestAFailedLeadTakesItsOwnTasksWithIt(t *testing.T) {
	script := func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case firstUser(req) == "CHILD slow":
			return mockmodel.Reply{Text: "never", Delay: 5 * time.Minute}
		case firstUser(req) == "CHILD lead" && lastRole(req) == "user" && req.LastUser == "CHILD lead":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Slow", "CHILD slow", "general")}}
		case firstUser(req) == "CHILD lead":
			return mockmodel.Reply{Status: 400, ErrorBody: `{"error":{"message":"the lead's request was invalid","type":"invalid_request_error"}}`}
		case req.LastUser == "FAIL" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Lead", "CHILD lead", "orchestrator")}}
		}
		return mockmodel.Reply{Text: "ok"}
	}
	e, _ := startWithConfig(t, script, withPlugin(t, orchestratorConfig))
	parent := e.prompt("FAIL")
	var leadID string
	e.eventually("the lead's launch", 60*time.Second, func() bool {
		if parts := e.toolParts(parent, "asyncagents_task"); len(parts) > 0 {
			leadID = idOf(parts[0])
		}
		return leadID != ""
	})
	e.eventually("the lead failed", 60*time.Second, func() bool {
		tk, _ := findStoredTask(e.oc, leadID)
		return tk.Status == task.StatusError
	})
	child := e.sessionOf(leadID)
	var slow string
	for _, p := range e.toolParts(child, "asyncagents_task") {
		slow = idOf(p)
	}
	require.NotEmpty(t, slow, "the lead launched its own task before it failed")
	e.eventually("its own task cancelled with it", 30*time.Second, func() bool {
		tk, _ := findStoredTask(e.oc, slow)
		return tk.Status == task.StatusCancelled
	})
	tk := storedTask(t, e.oc, slow)
	require.Equal(t, "its parent task failed (APIError)", tk.CancelReason)
	e.waitIdle(e.sessionOf(slow))
	e.waitIdle(child)
	turns := e.turnsOf("CHILD lead")
	e.waitIdle(parent)
	time.Sleep(2 * time.Second) // a notice on its way to the lead's child would have woken it by now
	require.Equal(t, turns, e.turnsOf("CHILD lead"), "no model turn of the failed lead's child")
	require.Contains(t, e.noticeOf(parent, leadID), "the lead's request was invalid", "the user's session hears of the failure")
}

// A native subagent (OpenCode's own task tool, run by the user's session) launches a task of its
// own, then its model fails: OpenCode fails the task tool's call, and the subagent's slow task is
// cancelled with it, told to the subagent in one line that costs it no model turn. Left running,
// the slow task's end would have woken the failed subagent for an answer no one reads.
func TestAFailedNativeSubagentTakesItsTasksWithIt(t *testing.T) {
	var slowID atomic.Value
	script := func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case firstUser(req) == "CHILD slow":
			return mockmodel.Reply{Text: "never", Delay: 5 * time.Minute}
		case firstUser(req) == "SUB lead" && lastRole(req) == "user" && req.LastUser == "SUB lead":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Slow", "CHILD slow", "general")}}
		case firstUser(req) == "SUB lead":
			if ids := launchedIDs(req); len(ids) > 0 {
				slowID.Store(ids[0])
			}
			return mockmodel.Reply{Status: 400, ErrorBody: `{"error":{"message":"the subagent's request was invalid","type":"invalid_request_error"}}`}
		case req.LastUser == "FAILSUB" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "task", Args: map[string]any{"description": "sub lead", "prompt": "SUB lead", "subagent_type": "orchestrator"}}}}
		}
		return mockmodel.Reply{Text: "ok"}
	}
	e, _ := startWithConfig(t, script, withPlugin(t, orchestratorConfig))
	parent := e.prompt("FAILSUB")
	e.eventually("the native task tool's call failed", 90*time.Second, func() bool {
		for _, p := range e.toolParts(parent, "task") {
			if p.State.Status == "error" {
				return true
			}
		}
		return false
	})
	slow, _ := slowID.Load().(string)
	require.NotEmpty(t, slow, "the subagent launched its own task before it failed")
	e.eventually("its own task cancelled with it", 30*time.Second, func() bool {
		tk, _ := findStoredTask(e.oc, slow)
		return tk.Status == task.StatusCancelled
	})
	tk := storedTask(t, e.oc, slow)
	require.Equal(t, "the subagent that launched it failed (APIError)", tk.CancelReason)
	sub := tk.ParentSessionID
	e.waitIdle(e.sessionOf(slow))
	e.waitIdle(sub)
	e.waitIdle(parent)
	e.eventually("the subagent told once", 30*time.Second, func() bool {
		return countVisible(e, sub, "Model failed: 1 background task cancelled") == 1
	})
	// Its launch and its failed call; the line it was told costs it no model turn (it is stored
	// without a reply), and the cancelled task's end wakes it for none either.
	e.waitIdle(sub)
	require.Equal(t, 2, e.turnsOf("SUB lead"), "no model turn of the failed subagent after its failure")
	require.Empty(t, e.noticeOf(parent, slow), "the user's session is not told of its subagent's task")
}
