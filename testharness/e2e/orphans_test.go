package e2e

import (
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
