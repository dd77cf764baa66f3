package core

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// parentIs answers a walk's session.get with the session's parent ("" for none).
func (h *wkHarness) parentIs(get Effect, parent string) []Effect {
	return h.run(Event{Type: EventEffectDone, EffectID: get.ID, OK: true,
		Result: json.RawMessage(fmt.Sprintf(`{"id":%q,"parentID":%q}`, get.SessionID, parent))})
}

func (h *wkHarness) asksOn(worker, session, id string) []Effect {
	return h.from(worker, "permission.asked", fmt.Sprintf(`{"id":%q,"sessionID":%q,"permission":"bash","patterns":["make"]}`, id, session))
}

// A request from a session the parent never saw created (a subagent of the child, created while
// the stream was down or before a restart) is traced up the worker's sessions to the task, once;
// the way is remembered.
func TestAWorkersRequestFromAnUnseenSessionIsTracedToItsTask(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	h.state("w1", true, "")
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	h.idleParent()

	gets := ofKind(h.asksOn("w1", "ses_sub", "per_1"), EffectSessionGet)
	require.Len(t, gets, 1)
	require.Equal(t, "ses_sub", gets[0].SessionID)
	require.Equal(t, "w1", gets[0].Worker)
	require.Empty(t, ofKind(h.asksOn("w1", "ses_sub", "per_1"), EffectSessionGet), "one walk at a time")
	gets = ofKind(h.parentIs(gets[0], "ses_mid"), EffectSessionGet)
	require.Len(t, gets, 1, "up one more")
	require.Equal(t, "ses_mid", gets[0].SessionID)
	out := h.parentIs(gets[0], tk.SessionID)
	require.NotNil(t, tk.pendingPermission("per_1"))
	require.Len(t, parentNotices(out), 1)

	out = h.asksOn("w1", "ses_sub", "per_2")
	require.Empty(t, ofKind(out, EffectSessionGet), "the way is remembered")
	require.NotNil(t, tk.pendingPermission("per_2"))
}

// A session that leads to none of the tasks is walked once; a failed read is walked again.
func TestAWorkersForeignSessionIsWalkedOnce(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	h.state("w1", true, "")
	tk := h.taskOf(first(h.launchOn("a", "w1")))

	get := ofKind(h.asksOn("w1", "ses_else", "per_x"), EffectSessionGet)[0]
	h.parentIs(get, "")
	require.Empty(t, ofKind(h.asksOn("w1", "ses_else", "per_y"), EffectSessionGet))
	require.Empty(t, tk.Permissions)

	get = ofKind(h.asksOn("w1", "ses_flaky", "per_z"), EffectSessionGet)[0]
	h.run(Event{Type: EventEffectDone, EffectID: get.ID, Error: "worker w1: reading the session: timed out"})
	require.Len(t, ofKind(h.asksOn("w1", "ses_flaky", "per_z"), EffectSessionGet), 1)

	// A local event from a session not ours is no worker's: nothing is walked.
	require.Empty(t, ofKind(h.asksOn("", "ses_local", "per_l"), EffectSessionGet))
}

// The read of a worker's pending requests walks from a session it does not know, too.
func TestAWorkersListedRequestFromAnUnseenSessionIsTraced(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	h.state("w1", true, "")
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	out := h.listed(h.reconnect("w1")[0], pendingOn("ses_sub", "per_1"))
	gets := ofKind(out, EffectSessionGet)
	require.Len(t, gets, 1)
	h.parentIs(gets[0], tk.SessionID)
	require.NotNil(t, tk.pendingPermission("per_1"))
}

// The answer to a request whose walk is under way comes first: the walk's end marks nothing.
func TestAnAnswerDuringAWalkIsNotLost(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	h.state("w1", true, "")
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	get := ofKind(h.asksOn("w1", "ses_sub", "per_1"), EffectSessionGet)[0]
	h.from("w1", "permission.replied", `{"sessionID":"ses_sub","requestID":"per_1","reply":"once"}`)
	h.parentIs(get, tk.SessionID)
	require.Nil(t, tk.permission("per_1"))
	require.NotNil(t, h.m.taskBelow("ses_sub"), "the way is still remembered")
}

// A walk deeper below the child than a lookup goes ends as foreign, not as a mark no lookup
// could find again.
func TestAWalkDeeperThanALookupEndsAsForeign(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	h.state("w1", true, "")
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	gets := ofKind(h.asksOn("w1", "ses_s0", "per_deep"), EffectSessionGet)
	for i := 1; i < maxTraceSteps; i++ {
		require.Len(t, gets, 1, "step %d", i)
		gets = ofKind(h.parentIs(gets[0], fmt.Sprintf("ses_s%d", i)), EffectSessionGet)
	}
	h.parentIs(gets[0], tk.SessionID)
	require.Empty(t, tk.Permissions)
	require.Empty(t, ofKind(h.asksOn("w1", "ses_s0", "per_again"), EffectSessionGet), "remembered as none of the tasks'")

	// The same to a task that has ended: its spending does not walk at each event.
	h.call(ToolCancel, fmt.Sprintf(`{"task_id":%q}`, tk.ID))
	gets = ofKind(h.spentOn("w1", "ses_t0", "msg_1", 10, 0), EffectSessionGet)
	for i := 1; i < maxTraceSteps; i++ {
		gets = ofKind(h.parentIs(gets[0], fmt.Sprintf("ses_t%d", i)), EffectSessionGet)
	}
	h.parentIs(gets[0], tk.SessionID)
	require.Empty(t, ofKind(h.spentOn("w1", "ses_t0", "msg_2", 10, 0), EffectSessionGet))
}

// A restored task still looking for its child: a walk that ends at a session with no parent may
// end at that child, so nothing is remembered as foreign; once the child is found, the worker's
// pending requests are read again.
func TestAWalkWhileAChildIsLookedForRemembersNothing(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	tk := task.Task{ID: "bg_lost", ParentSessionID: "ses_p", ParentMessageID: "m_p", BatchID: "m_p", Description: "filler", Prompt: "do",
		Agent: "general", Worker: "w1", Status: task.StatusRunning, StartedAt: 900_000, Depth: 1, Progress: task.Progress{LastTools: []string{}}}
	_, eff := h.m.Restore(h.now, HistoryLine(tk))
	eff = append(eff, h.run(Event{Type: EventStart})...)
	eff = append(eff, h.state("w1", true, "")...)
	look := ofKind(eff, EffectSessionList)
	require.NotEmpty(t, look)

	get := ofKind(h.asksOn("w1", "ses_sub", "per_1"), EffectSessionGet)[0]
	get = ofKind(h.parentIs(get, "ses_child"), EffectSessionGet)[0]
	h.parentIs(get, "")
	require.False(t, h.m.untraced["ses_sub"])

	out := h.run(Event{Type: EventEffectDone, EffectID: look[len(look)-1].ID, OK: true,
		Result: json.RawMessage(`[{"id":"ses_child","metadata":{"asyncagents":{"task":"bg_lost"}}}]`)})
	require.Equal(t, "ses_child", h.m.task("bg_lost").SessionID)
	require.Len(t, ofKind(out, EffectPermissionList), 1, "the adopted child's worker is asked its requests")
	require.Len(t, ofKind(h.asksOn("w1", "ses_sub", "per_1"), EffectSessionGet), 1, "walked again")
}
