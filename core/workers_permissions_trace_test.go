package core

import (
	"encoding/json"
	"fmt"
	"testing"

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
