package core

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// launchWith launches a task from ses_p with extra arguments and returns the tool's answer.
func (h *fbHarness) launchWith(desc, extra string) Effect {
	eff := h.step(Event{Type: EventToolCall, CallID: "call_" + desc, Tool: ToolTask, SessionID: "ses_p", MessageID: "msg_p",
		Args: json.RawMessage(fmt.Sprintf(`{"description":%q,"prompt":"work","agent":"general"%s}`, desc, extra))})
	replies := ofKind(eff, EffectToolReply)
	require.Len(h.t, replies, 1)
	return replies[0]
}

// stepDone is one model call of the child's ending: its step-finish part.
func (h *fbHarness) stepDone(session, partID, reason string) []Effect {
	return h.oc("message.part.updated", fmt.Sprintf(`{"part":{"id":%q,"sessionID":%q,"messageID":"msg_s","type":"step-finish","reason":%q,"cost":0,"tokens":{"input":1,"output":1}}}`, partID, session, reason))
}

// spent has the child's assistant message msgID report its usage so far.
func (h *fbHarness) spent(session, msgID string, input int, cost float64, finish string) []Effect {
	return h.oc("message.updated", fmt.Sprintf(`{"info":{"id":%q,"sessionID":%q,"role":"assistant","finish":%q,"tokens":{"input":%d,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"cost":%v,"time":{"created":%d}}}`, msgID, session, finish, input, cost, h.now))
}

func TestBudgetSteps(t *testing.T) {
	h := newFB(t, config.Config{})
	id := h.launchWith("loop", `,"budget":{"steps":3}`).Metadata["taskId"].(string)
	ses := h.m.task(id).SessionID
	h.stepDone(ses, "prt_1", "tool-calls")
	h.stepDone(ses, "prt_1", "tool-calls") // the same part again: counted once
	h.stepDone(ses, "prt_2", "tool-calls")
	require.Equal(t, task.StatusRunning, h.m.task(id).Status)
	require.Equal(t, 2, h.m.task(id).Steps)
	eff := h.stepDone(ses, "prt_3", "tool-calls")
	tk := h.m.task(id)
	require.Equal(t, task.StatusError, tk.Status)
	require.Equal(t, "budget exceeded: 3 steps (limit 3)", tk.Error.Message)
	require.Len(t, ofKind(eff, EffectAbort), 1, "the child is aborted")

	// A last call that ends the turn is the answer: it is never stopped.
	id = h.launchWith("short", `,"budget":{"steps":1}`).Metadata["taskId"].(string)
	h.stepDone(h.m.task(id).SessionID, "prt_9", "stop")
	require.Equal(t, task.StatusRunning, h.m.task(id).Status)
}

func TestBudgetTokensAndCost(t *testing.T) {
	h := newFB(t, config.Config{Budget: config.BudgetConfig{Tokens: 1000}})
	id := h.launchWith("tok", "").Metadata["taskId"].(string)
	require.Equal(t, &task.Budget{Tokens: 1000}, h.m.task(id).Budget, "the config's default")
	ses := h.m.task(id).SessionID
	h.spent(ses, "msg_1", 600, 0, "tool-calls")
	require.Equal(t, task.StatusRunning, h.m.task(id).Status)
	h.spent(ses, "msg_2", 500, 0, "tool-calls")
	require.Equal(t, "budget exceeded: 1100 tokens (limit 1000)", h.m.task(id).Error.Message)

	id = h.launchWith("cost", `,"budget":{"tokens":0,"costUsd":0.01}`).Metadata["taskId"].(string)
	require.Equal(t, &task.Budget{CostUsd: 0.01}, h.m.task(id).Budget, "the argument wins field by field")
	h.spent(h.m.task(id).SessionID, "msg_3", 10, 0.02, "tool-calls")
	require.Equal(t, "budget exceeded: $0.0200 (limit $0.0100)", h.m.task(id).Error.Message)
}

// Past budget.sessionCostUsd, the session's running tasks stop (nested ones too) and new
// launches are refused with the figures; another session's task runs on.
func TestBudgetSessionCost(t *testing.T) {
	h := newFB(t, config.Config{Budget: config.BudgetConfig{SessionCostUsd: 0.5}})
	a := h.launchFrom("ses_p", "A")
	b := h.launchFrom("ses_p", "B")
	nested := h.launchFrom(h.m.task(b).SessionID, "B's own")
	other := h.launchFrom("ses_other", "elsewhere")
	h.spent(h.m.task(nested).SessionID, "msg_n", 10, 0.3, "tool-calls")
	require.Equal(t, task.StatusRunning, h.m.task(a).Status)
	h.spent(h.m.task(a).SessionID, "msg_a", 10, 0.25, "tool-calls")
	require.Equal(t, task.StatusCancelled, h.m.task(nested).Status, "stopped with its parent task")
	for _, id := range []string{a, b} {
		require.Equal(t, task.StatusError, h.m.task(id).Status, id)
		require.Contains(t, h.m.task(id).Error.Message, "budget exceeded: this session's tasks cost $0.5500 (limit budget.sessionCostUsd $0.5000)")
	}
	require.Equal(t, task.StatusRunning, h.m.task(other).Status)
	r := h.launchWith("more", "")
	require.Contains(t, r.Error, "have cost $0.5500, past budget.sessionCostUsd ($0.5000); no task was created")
}

func TestBudgetArgumentErrors(t *testing.T) {
	h := newFB(t, config.Config{})
	for args, want := range map[string]string{
		`,"budget":{"steps":-1}`:      "budget.steps must be a whole number >= 0 (0: no limit), got -1; no task was created",
		`,"budget":{"tokens":1.5}`:    "budget.tokens must be a whole number >= 0 (0: no limit), got 1.5",
		`,"budget":{"costUsd":-0.1}`:  "budget.costUsd must be a number of US dollars >= 0",
		`,"budget":{"steps":"three"}`: "budget.steps",
		`,"budget":"lots"`:            "budget",
	} {
		r := h.launchWith("bad", args)
		require.Contains(t, r.Error, want, args)
	}
	require.Empty(t, h.m.order, "no task was created")
}

// The budget and the usage against it show in asyncagents_list and asyncagents_output.
func TestBudgetIsShown(t *testing.T) {
	h := newFB(t, config.Config{})
	id := h.launchWith("shown", `,"budget":{"steps":5,"tokens":5000,"costUsd":0.5}`).Metadata["taskId"].(string)
	ses := h.m.task(id).SessionID
	h.stepDone(ses, "prt_1", "tool-calls")
	h.spent(ses, "msg_1", 1200, 0.01, "tool-calls")
	h.idleParent()
	want := "budget: 1 of 5 model calls · 1.2k of 5k tokens · $0.01 of $0.50"
	require.Contains(t, h.call(ToolList, `{}`).Output, want)
	require.Contains(t, h.call(ToolOutput, fmt.Sprintf(`{"task_id":%q}`, id)).Output, want)
}
