package core

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// launchFrom launches a task from session (a user's, or a task's child) and returns its ID.
func (h *fbHarness) launchFrom(session, desc string) string {
	eff := h.step(Event{Type: EventToolCall, CallID: fmt.Sprint("call_", desc), Tool: ToolTask, SessionID: session, MessageID: "msg_" + session,
		Args: json.RawMessage(fmt.Sprintf(`{"description":%q,"prompt":"work","agent":"general"}`, desc))})
	replies := ofKind(eff, EffectToolReply)
	require.Len(h.t, replies, 1)
	require.Empty(h.t, replies[0].Error)
	return replies[0].Metadata["taskId"].(string)
}

// abortTurn is what OpenCode sends when a session's turn is interrupted mid-stream.
func (h *fbHarness) abortTurn(session string) []Effect {
	return h.oc("session.error", fmt.Sprintf(`{"sessionID":%q,"error":{"name":"MessageAbortedError","data":{"message":"The operation was aborted."}}}`, session))
}

func (h *fbHarness) status(id string) task.Status { return h.m.task(id).Status }

// An interrupted parent turn cancels its running and queued tasks and the tasks they launched,
// aborts the children that run, and tells the parent once, without a model turn, once it is idle.
func TestParentAbortCascades(t *testing.T) {
	h := newFB(t, config.Config{MaxConcurrentStarts: 2})
	a := h.launchFrom("ses_p", "A")
	b := h.launchFrom("ses_p", "B")
	q := h.launchFrom("ses_p", "Q") // queued behind A and B
	require.True(t, h.m.task(q).Queued)
	grand := h.launchFrom(h.m.task(a).SessionID, "A's own") // queued too: both slots are taken
	other := h.launchFrom("ses_other", "elsewhere")
	h.oc("session.status", `{"sessionID":"ses_p","status":{"type":"busy"}}`)

	eff := h.abortTurn("ses_p")
	for _, id := range []string{a, b, q, grand} {
		require.Equal(t, task.StatusCancelled, h.status(id), id)
		require.Equal(t, cascadeReason, h.m.task(id).CancelReason)
	}
	require.Equal(t, task.StatusRunning, h.status(other), "another session's task runs on")
	var aborted []string
	for _, e := range ofKind(eff, EffectAbort) {
		aborted = append(aborted, e.SessionID)
	}
	require.ElementsMatch(t, []string{h.m.task(a).SessionID, h.m.task(b).SessionID}, aborted, "only the children that ran are aborted")
	for _, c := range ofKind(eff, EffectSessionCreate) {
		require.Equal(t, other, c.TaskID, "only another parent's queued task starts: none of the cancelled ones gets a session")
	}
	require.Empty(t, parentNotices(eff), "the parent is still busy: the notice waits")

	eff = h.idleParent()
	notices := parentNotices(eff)
	require.Len(t, notices, 1, "one line for all of them")
	require.True(t, notices[0].NoReply, "no model turn")
	require.Equal(t, `⊘ Interrupted: 4 background tasks cancelled ("A", "A's own", "B", "Q").`, notices[0].Parts[0].Text)
	for _, id := range []string{a, b, q, grand} {
		require.Contains(t, notices[0].Parts[1].Text, id)
	}
	require.Empty(t, prompts(eff, h.m.task(a).SessionID), "the cancelled child gets no notice of its own cancelled task")

	// The second signal of the same abort (the message's error) finds nothing more to do.
	eff = h.oc("message.updated", `{"info":{"id":"msg_x","sessionID":"ses_p","role":"assistant","error":{"name":"MessageAbortedError","data":{}},"time":{"created":1,"completed":2}}}`)
	require.Empty(t, parentNotices(eff))
}

// A parent turn that simply ends cancels nothing, nor does another error, nor an abort with the
// option off; an abort that reaches OpenCode outside the stream (the message's error alone)
// cascades as well.
func TestParentAbortCascadeOnlyOnAbort(t *testing.T) {
	h := newFB(t, config.Config{})
	a := h.launchFrom("ses_p", "A")
	h.idleParent()
	h.oc("session.error", `{"sessionID":"ses_p","error":{"name":"APIError","data":{"message":"overloaded"}}}`)
	require.Equal(t, task.StatusRunning, h.status(a))

	off := newFB(t, config.Config{CancelOnParentAbort: config.Bool(false)})
	b := off.launchFrom("ses_p", "B")
	off.abortTurn("ses_p")
	require.Equal(t, task.StatusRunning, off.status(b), "cancelOnParentAbort false")

	h.oc("session.status", `{"sessionID":"ses_p","status":{"type":"busy"}}`) // a new turn, then its abort
	h.oc("message.updated", `{"info":{"id":"msg_x","sessionID":"ses_p","role":"assistant","error":{"name":"MessageAbortedError","data":{}},"time":{"created":1,"completed":2}}}`)
	require.Equal(t, task.StatusCancelled, h.status(a))
}

// asyncagents_cancel of a task cancels what its child launched too, without notices to the
// cancelled child.
func TestCancelTakesTheTasksBelow(t *testing.T) {
	h := newFB(t, config.Config{})
	a := h.launchFrom("ses_p", "A")
	grand := h.launchFrom(h.m.task(a).SessionID, "below")
	h.idleParent()
	h.call(ToolCancel, fmt.Sprintf(`{"task_id":%q}`, a))
	require.Equal(t, task.StatusCancelled, h.status(grand))
}

// An abort of a turn this process never saw running (OpenCode marking, at its start, the turns a
// crash cut short) cancels nothing: the restore reconciles those tasks.
func TestAbortOfATurnNotSeenRunningCascadesNothing(t *testing.T) {
	h := newFB(t, config.Config{})
	a := h.launchFrom("ses_p", "A")
	h.idleParent()
	h.abortTurn("ses_p")
	require.Equal(t, task.StatusRunning, h.status(a))
}
