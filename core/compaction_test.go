package core

import (
	"fmt"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/stretchr/testify/require"
)

// The compaction hook gets the session's tasks, and a compacted parent gets one message, without a
// model turn, with those still running or unread; a session without tasks gets neither.
func TestCompactionRemembersTheTasks(t *testing.T) {
	h := newFB(t, config.Config{})
	run := h.launchFrom("ses_p", "still going")
	done := h.launchFrom("ses_p", "finished")
	h.answer(h.m.task(done).SessionID, "", "the answer\nwith more lines")

	h.idleParent()
	hook := func(session string) string {
		eff := h.step(Event{Type: EventToolCall, CallID: "hook_" + session, Tool: HookCompacting, SessionID: session})
		return ofKind(eff, EffectToolReply)[0].Output
	}
	ctx := hook("ses_p")
	require.Contains(t, ctx, "- "+run+" (session ses_c1) @general \"still going\": running for")
	require.Contains(t, ctx, "- "+done+" (session ses_c2) @general \"finished\": completed: the answer … (result not read yet)")
	require.Empty(t, hook("ses_empty"))
	require.False(t, h.m.busy["ses_p"], "the hook does not mark the session busy")

	eff := h.oc("session.compacted", `{"sessionID":"ses_p"}`)
	notices := parentNotices(eff)
	require.Len(t, notices, 1)
	require.True(t, notices[0].NoReply)
	require.Equal(t, "↻ Compacted: 1 background task still running, 1 with results not read (task IDs kept for the next turn).", notices[0].Parts[0].Text)
	require.Contains(t, notices[0].Parts[1].Text, run)
	require.Contains(t, notices[0].Parts[1].Text, done)

	h.call(ToolOutput, fmt.Sprintf(`{"task_id":%q}`, done)) // read now
	h.answer(h.m.task(run).SessionID, "", "ok")
	h.idleParent()
	notices = parentNotices(h.oc("session.compacted", `{"sessionID":"ses_p"}`))
	require.Len(t, notices, 1, "finished since the last compaction, not read")
	require.NotContains(t, notices[0].Parts[1].Text, done, "read")
	require.Empty(t, parentNotices(h.oc("session.compacted", `{"sessionID":"ses_p"}`)), "nothing running, nothing new")
}
