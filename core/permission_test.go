package core

import (
	"fmt"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

func (h *fbHarness) asks(session, id string) []Effect {
	return h.oc("permission.asked", fmt.Sprintf(`{"id":%q,"sessionID":%q,"permission":"bash","patterns":["echo hi"],"always":["echo *"],"metadata":{}}`, id, session))
}

// A child's request marks its task, tells the parent once without a model turn and the TUI in a
// toast, shows in list and output, is no stall, and clears on permission.replied.
func TestPermissionRequestReachesTheUser(t *testing.T) {
	h := newFB(t, warnAfter(60_000))
	id := h.launchFrom("ses_p", "build it")
	ses := h.m.task(id).SessionID
	h.idleParent()
	eff := h.asks(ses, "per_1")
	notices := parentNotices(eff)
	require.Len(t, notices, 1)
	require.True(t, notices[0].NoReply, "no model turn")
	require.Equal(t, `⏸ Agent "build it" waits for permission: bash echo hi`, notices[0].Parts[0].Text)
	require.Contains(t, notices[0].Parts[1].Text, id)
	require.Len(t, notices[0].Parts, 2, "told once: a top-level task is its own top task")
	require.Empty(t, notices[0].TaskIDs, "one task told of")
	require.Len(t, ofKind(eff, EffectToast), 1)
	require.NotNil(t, h.m.task(id).WaitingPermission())
	require.Contains(t, h.call(ToolList, `{}`).Output, "(waiting for permission: bash echo hi)")
	require.Contains(t, h.call(ToolOutput, fmt.Sprintf(`{"task_id":%q}`, id)).Output, "waiting for permission: bash echo hi")

	h.asks(ses, "per_1") // the same request again: nothing new
	require.Len(t, h.m.task(id).Permissions, 1)
	require.Empty(t, parentNotices(h.wait(120_000)), "waiting for the user is no stall")
	require.Zero(t, h.m.task(id).StalledSince)

	h.oc("permission.replied", fmt.Sprintf(`{"sessionID":%q,"requestID":"per_1","reply":"once"}`, ses))
	require.Nil(t, h.m.task(id).WaitingPermission())
	require.Equal(t, "once", h.m.task(id).Permissions[0].Reply)
}

// A request from a session below the child (a subagent the child ran itself) is traced to the
// task; a session nobody knows is ignored.
func TestPermissionFromASessionBelow(t *testing.T) {
	h := newFB(t, config.Config{})
	id := h.launchFrom("ses_p", "deep")
	ses := h.m.task(id).SessionID
	h.oc("session.created", fmt.Sprintf(`{"info":{"id":"ses_grand","parentID":%q}}`, ses))
	h.asks("ses_grand", "per_2")
	require.Equal(t, "ses_grand", h.m.task(id).WaitingPermission().SessionID)
	h.asks("ses_unknown", "per_3")
	require.Len(t, h.m.task(id).Permissions, 1)
}

// permission.timeoutMs rejects a request nobody answered, with a message for the child.
func TestPermissionTimeout(t *testing.T) {
	h := newFB(t, config.Config{Permission: config.PermissionConfig{TimeoutMs: 30_000}})
	id := h.launchFrom("ses_p", "timed")
	ses := h.m.task(id).SessionID
	eff := h.asks(ses, "per_4")
	var timer Effect
	for _, e := range ofKind(eff, EffectTimerSet) {
		if e.DelayMs == 30_000 {
			timer = e
		}
	}
	require.NotEmpty(t, timer.TimerID)
	eff = h.step(Event{Type: EventTimer, TimerID: timer.TimerID})
	replies := ofKind(eff, EffectPermissionReply)
	require.Len(t, replies, 1)
	require.Equal(t, "per_4", replies[0].RequestID)
	require.Equal(t, task.PermissionReject, replies[0].Answer)
	require.Contains(t, replies[0].Message, "Go on without it")
	require.True(t, h.m.task(id).WaitingPermission().TimedOut)
}
