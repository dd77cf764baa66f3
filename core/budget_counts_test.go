package core

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

// subagent has OpenCode create a session under the task's child: a subagent the child runs
// through OpenCode's own task tool.
func (h *fbHarness) subagent(child, session string) {
	h.oc("session.created", fmt.Sprintf(`{"info":{"id":%q,"parentID":%q}}`, session, child))
}

// What the child's own subagents spend counts: toward the task's budget (tokens, cost and model
// calls) and toward budget.sessionCostUsd.
func TestBudgetCountsTheChildsSubagents(t *testing.T) {
	h := newFB(t, config.Config{})
	id := h.launchWith("delegates", `,"budget":{"costUsd":0.1}`).Metadata["taskId"].(string)
	ses := h.m.task(id).SessionID
	h.subagent(ses, "ses_sub")
	h.subagent("ses_sub", "ses_subsub")
	h.spent(ses, "msg_1", 10, 0.04, "tool-calls")
	h.spent("ses_sub", "msg_2", 10, 0.04, "stop")
	require.Equal(t, task.StatusRunning, h.status(id))
	h.spent("ses_subsub", "msg_3", 10, 0.04, "stop")
	tk := h.m.task(id)
	require.Equal(t, task.StatusError, tk.Status, "a subagent's spending is the task's")
	require.Contains(t, tk.Error.Message, "budget exceeded: $0.1200")

	steps := h.launchWith("steps", `,"budget":{"steps":2}`).Metadata["taskId"].(string)
	h.subagent(h.m.task(steps).SessionID, "ses_sub2")
	h.stepDone(h.m.task(steps).SessionID, "prt_1", "tool-calls")
	h.stepDone("ses_sub2", "prt_2", "stop")
	require.Equal(t, 2, h.m.task(steps).Steps)
	require.Equal(t, task.StatusError, h.status(steps))

	s := newFB(t, config.Config{Budget: config.BudgetConfig{SessionCostUsd: 0.05}})
	a := s.launchFrom("ses_p", "A")
	s.subagent(s.m.task(a).SessionID, "ses_sub")
	s.spent("ses_sub", "msg_1", 10, 0.06, "stop")
	require.Equal(t, task.StatusError, s.status(a), "budget.sessionCostUsd counts it too")
}

// Usage learned from reading the child's messages (the poll, a check at idle) is held to the
// budget like usage from events.
func TestBudgetChecksUsageFromAMessageRead(t *testing.T) {
	h := newFB(t, config.Config{})
	id := h.launchWith("read", `,"budget":{"tokens":100}`).Metadata["taskId"].(string)
	ses := h.m.task(id).SessionID
	h.busy(ses)
	h.pollWith(fmt.Sprintf(`[{"info":{"id":"msg_1","sessionID":%q,"role":"assistant","tokens":{"input":500,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0,"time":{"created":%d}},"parts":[]}]`, ses, h.now))
	tk := h.m.task(id)
	require.Equal(t, task.StatusError, tk.Status)
	require.Contains(t, tk.Error.Message, "500 tokens (limit 100)")
}

// After a restart, what OpenCode reports again is not counted twice: a message counted before
// (reported again as it was, or grown since) and a step already counted.
func TestBudgetCountsNothingTwiceAcrossARestart(t *testing.T) {
	h := newFB(t, config.Config{})
	id := h.launchWith("long", `,"budget":{"tokens":1000}`).Metadata["taskId"].(string)
	ses := h.m.task(id).SessionID
	h.subagent(ses, "ses_sub")
	h.spent(ses, "msg_1", 300, 0.01, "tool-calls")
	h.spent(ses, "msg_2", 200, 0.01, "tool-calls") // still streaming at the restart
	h.spent("ses_sub", "msg_3", 100, 0.01, "stop")
	h.stepDone(ses, "prt_1", "tool-calls")

	m := NewMachine(config.Config{})
	m.Restore(h.now+1000, HistoryLine(h.m.task(id).Task))
	h.m = m
	h.subagent(ses, "ses_sub")
	h.spent(ses, "msg_1", 300, 0.01, "tool-calls")
	h.spent("ses_sub", "msg_3", 100, 0.01, "stop")
	h.spent(ses, "msg_2", 250, 0.01, "tool-calls") // grown: 50 more
	h.stepDone(ses, "prt_1", "tool-calls")
	tk := h.m.task(id)
	tok, _ := tk.Usage()
	require.Equal(t, int64(650), tok.Total(), "each message counted once, with its latest figures")
	require.Equal(t, 1, tk.Steps, "a step counted before the restart is not counted again")
	h.stepDone(ses, "prt_2", "tool-calls")
	require.Equal(t, 2, h.m.task(id).Steps)
}
