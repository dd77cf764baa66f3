package core

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

// A task launched from a subagent's session below another task's child (the child ran OpenCode's
// own task tool, and that subagent launched in the background) is nested in that task, as the
// child's own launch would be: it counts its depth from it, its permission line reaches the
// user's session, and its cost counts against that session's budget.sessionCostUsd.

func TestALaunchFromASubagentBelowAChildCountsItsDepth(t *testing.T) {
	h := newFB(t, config.Config{MaxDepth: 1})
	top := h.launchFrom("ses_p", "top")
	h.subagent(h.m.task(top).SessionID, "ses_sub")
	h.subagent("ses_sub", "ses_subsub")
	for _, from := range []string{"ses_sub", "ses_subsub"} {
		n := len(h.m.order)
		r := h.launchTry(from, "deep")
		require.Contains(t, r.Error, "nesting limit reached: this session runs inside a background task 1 level deep, and tasks may nest 1 deep", from)
		require.Len(t, h.m.order, n, "no task was created")
	}

	h = newFB(t, config.Config{MaxDepth: 2})
	top = h.launchFrom("ses_p", "top")
	h.subagent(h.m.task(top).SessionID, "ses_sub")
	nested := h.launchFrom("ses_sub", "nested")
	require.Equal(t, 2, h.m.task(nested).Depth)
	h.subagent(h.m.task(nested).SessionID, "ses_sub2")
	r := h.launchTry("ses_sub2", "deeper")
	require.Contains(t, r.Error, "2 levels deep, and tasks may nest 2 deep")
}

func TestAPermissionFromBelowASubagentsLaunchReachesTheUser(t *testing.T) {
	h := newFB(t, config.Config{})
	top := h.launchFrom("ses_p", "top")
	mid := h.m.task(top).SessionID
	h.subagent(mid, "ses_sub")
	nested := h.launchFrom("ses_sub", "nested")
	h.idleParent()
	h.oc("session.idle", `{"sessionID":"ses_sub"}`)
	eff := h.asks(h.m.task(nested).SessionID, "per_n")
	root := parentNotices(eff)
	require.Len(t, root, 1, "the user's session gets the line")
	require.Contains(t, root[0].Parts[0].Text, `⏸ Agent "nested" waits for permission`)
	require.Equal(t, h.m.task(top).ParentAgent, root[0].Agent)
	require.Len(t, prompts(eff, "ses_sub"), 1, "and so does the subagent that launched it")
	require.Empty(t, prompts(eff, mid), "not the child between them: it launched nothing")
}

func TestASubagentsTasksCostCountsAgainstTheUsersSession(t *testing.T) {
	h := newFB(t, config.Config{Budget: config.BudgetConfig{SessionCostUsd: 0.5}})
	a := h.launchFrom("ses_p", "A")
	h.subagent(h.m.task(a).SessionID, "ses_sub")
	nested := h.launchFrom("ses_sub", "A's subagent's")
	// The user's own session ran a subagent that launched in the background too.
	h.subagent("ses_p", "ses_usersub")
	own := h.launchFrom("ses_usersub", "the user's subagent's")
	other := h.launchFrom("ses_other", "elsewhere")
	h.spent(h.m.task(nested).SessionID, "msg_n", 10, 0.3, "tool-calls")
	require.Equal(t, task.StatusRunning, h.m.task(a).Status)
	h.spent(h.m.task(own).SessionID, "msg_o", 10, 0.25, "tool-calls")
	for _, id := range []string{a, own} {
		require.Equal(t, task.StatusError, h.m.task(id).Status, id)
		require.Contains(t, h.m.task(id).Error.Message, "this session's tasks cost $0.5500")
	}
	require.Equal(t, task.StatusCancelled, h.m.task(nested).Status, "stopped with the task whose child ran the subagent")
	require.Equal(t, task.StatusRunning, h.m.task(other).Status)
	r := h.launchTry("ses_usersub", "more")
	require.Contains(t, r.Error, "past budget.sessionCostUsd")
}

// launchTry is a launch from session that may be refused: the tool's reply.
func (h *fbHarness) launchTry(session, desc string) Effect {
	eff := h.step(Event{Type: EventToolCall, CallID: fmt.Sprint("call_", desc), Tool: ToolTask, SessionID: session, MessageID: "msg_" + session,
		Args: json.RawMessage(fmt.Sprintf(`{"description":%q,"prompt":"work","agent":"general"}`, desc))})
	replies := ofKind(eff, EffectToolReply)
	require.Len(h.t, replies, 1)
	return replies[0]
}

// Cancelling a task cancels what the subagents of its child launched, as its child's own launches
// are, even after the subagent has returned; an interrupted user's turn takes what its own
// subagents launched. Another task's launches below are that task's to cancel.
func TestCancelTakesTheTasksASubagentBelowLaunched(t *testing.T) {
	h := newFB(t, config.Config{})
	a := h.launchFrom("ses_p", "A")
	h.subagent(h.m.task(a).SessionID, "ses_sub")
	nested := h.launchFrom("ses_sub", "A's subagent's")
	b := h.launchFrom("ses_p", "B")
	h.subagent(h.m.task(b).SessionID, "ses_subb")
	ofB := h.launchFrom("ses_subb", "B's subagent's")
	h.idleParent()
	r := h.call(ToolCancel, fmt.Sprintf(`{"task_id":%q}`, a))
	require.Empty(t, r.Error)
	require.Equal(t, task.StatusCancelled, h.m.task(nested).Status)
	require.Equal(t, task.StatusRunning, h.m.task(ofB).Status, "B's are B's")

	h.subagent("ses_p", "ses_usersub")
	own := h.launchFrom("ses_usersub", "the user's subagent's")
	h.busy("ses_p")
	h.abortTurn("ses_p")
	for _, id := range []string{b, ofB, own} {
		require.Equal(t, task.StatusCancelled, h.m.task(id).Status, id)
	}
}

// The ⊘ line of an interrupted turn speaks as the agent of that session's own turns, not as the
// agent of a subagent whose task it lists first; with none of its own, it names none.
func TestTheCascadeLineSpeaksAsTheSessionsOwnAgent(t *testing.T) {
	h := newFB(t, config.Config{})
	h.subagent("ses_p", "ses_usersub")
	h.step(Event{Type: EventToolCall, CallID: "call_sub", Tool: ToolTask, SessionID: "ses_usersub", MessageID: "msg_sub", Agent: "explore",
		Args: json.RawMessage(`{"description":"from the subagent","prompt":"work","agent":"general"}`)})
	h.step(Event{Type: EventToolCall, CallID: "call_own", Tool: ToolTask, SessionID: "ses_p", MessageID: "msg_p", Agent: "build",
		Args: json.RawMessage(`{"description":"own","prompt":"work","agent":"general"}`)})
	h.busy("ses_p")
	h.abortTurn("ses_p")
	lines := parentNotices(h.idleParent())
	require.Len(t, lines, 1)
	require.Contains(t, lines[0].Parts[0].Text, "from the subagent")
	require.Equal(t, "build", lines[0].Agent)

	h.subagent("ses_q", "ses_qsub")
	h.step(Event{Type: EventToolCall, CallID: "call_q", Tool: ToolTask, SessionID: "ses_qsub", MessageID: "msg_q", Agent: "explore",
		Args: json.RawMessage(`{"description":"only the subagent's","prompt":"work","agent":"general"}`)})
	h.busy("ses_q")
	h.abortTurn("ses_q")
	lines = prompts(h.oc("session.idle", `{"sessionID":"ses_q"}`), "ses_q")
	require.Len(t, lines, 1)
	require.Empty(t, lines[0].Agent)
}

// A launch from the user's subagent still waiting (here for its worker's agent list) when the
// user's turn is interrupted is cancelled with the rest, as soon as it is a task; asyncagents_cancel
// (all) from the user's session takes only the session's own.
func TestAnInterruptTakesTheLaunchesOfASubagentBelow(t *testing.T) {
	r := newAgentsRig(t)
	r.upWith("general")
	r.subagent("ses_p", "ses_usersub")
	ask := r.launchWaitingOnW1("ses_usersub")
	r.call(ToolCancel, `{"all":true}`)
	require.False(t, r.m.startingLaunches()[0].cancelled, "not the session's own launch")
	r.busy("ses_p")
	r.abortTurn("ses_p")
	require.True(t, r.m.startingLaunches()[0].cancelled)
	require.Equal(t, task.StatusCancelled, r.launchedOnceListed(ask).Status)
}

// launchWaitingOnW1 launches from session an agent w1 has not listed yet: the launch waits for
// w1's agent list, whose request it returns.
func (r *wkHarness) launchWaitingOnW1(session string) Effect {
	eff := r.run(Event{Type: EventToolCall, CallID: "c_sub", Tool: ToolTask, SessionID: session, MessageID: "msg_s",
		Args: json.RawMessage(`{"description":"waits","prompt":"p","agent":"fresh","worker":"w1"}`)})
	a := asks(eff)
	require.Len(r.t, a, 1, "waits for w1's list")
	return a[0]
}

// launchedOnceListed answers w1's list with the agent the waiting launch asked for: its task.
func (r *wkHarness) launchedOnceListed(ask Effect) *run {
	replies := ofKind(r.answerAgents(ask, "general", "fresh"), EffectToolReply)
	require.Len(r.t, replies, 1)
	id, _ := replies[0].Metadata["taskId"].(string)
	require.NotEmpty(r.t, id, replies[0].Error)
	return r.m.task(id)
}

// Cancelling a task takes the launches still starting from its child's subagents too.
func TestCancelTakesTheLaunchesStartingBelowTheTask(t *testing.T) {
	r := newAgentsRig(t)
	r.upWith("general")
	a := r.launchFrom("ses_p", "A")
	r.subagent(r.m.task(a).SessionID, "ses_sub")
	ask := r.launchWaitingOnW1("ses_sub")
	r.call(ToolCancel, fmt.Sprintf(`{"task_id":%q}`, a))
	require.Equal(t, task.StatusCancelled, r.launchedOnceListed(ask).Status)
}

// With none of the stopped tasks its own, the ⊘ line speaks as the session's newest own task did.
func TestTheCascadeLineFallsBackToTheSessionsNewestTask(t *testing.T) {
	h := newFB(t, config.Config{})
	for _, agent := range []string{"build", "plan"} {
		h.step(Event{Type: EventToolCall, CallID: "call_" + agent, Tool: ToolTask, SessionID: "ses_p", MessageID: "msg_" + agent, Agent: agent,
			Args: json.RawMessage(fmt.Sprintf(`{"description":%q,"prompt":"work","agent":"general"}`, agent))})
	}
	for _, id := range h.m.order {
		h.call(ToolCancel, fmt.Sprintf(`{"task_id":%q}`, id))
	}
	h.subagent("ses_p", "ses_usersub")
	h.step(Event{Type: EventToolCall, CallID: "call_sub", Tool: ToolTask, SessionID: "ses_usersub", MessageID: "msg_sub", Agent: "explore",
		Args: json.RawMessage(`{"description":"from the subagent","prompt":"work","agent":"general"}`)})
	h.idleParent()
	h.busy("ses_p")
	h.abortTurn("ses_p")
	lines := parentNotices(h.idleParent())
	require.Len(t, lines, 1)
	require.Equal(t, "plan", lines[0].Agent)
}
