package core

import (
	"fmt"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/stretchr/testify/require"
)

// A ⏸ line held for a busy parent is dropped once its request has been answered: the user has
// seen it (or the timeout answered it), and the line would tell the parent of a wait that is over.
// One still pending when the parent goes idle is sent.
func TestStalePermissionLineIsDropped(t *testing.T) {
	h := newFB(t, config.Config{})
	id := h.launchFrom("ses_p", "asks")
	ses := h.m.task(id).SessionID
	h.busy("ses_p")
	require.Empty(t, parentNotices(h.asks(ses, "per_1")), "the parent is busy: the line waits")
	h.oc("permission.replied", fmt.Sprintf(`{"sessionID":%q,"requestID":"per_1","reply":"once"}`, ses))
	require.Empty(t, parentNotices(h.idleParent()), "answered meanwhile: the held line is dropped")

	h.busy("ses_p")
	h.asks(ses, "per_2")
	notices := parentNotices(h.idleParent())
	require.Len(t, notices, 1, "a request still pending is told")
	require.Contains(t, notices[0].Parts[0].Text, "⏸")
}

// A nested task's request reaches the user's root session, not only the session of the task
// that launched it (read by a model there), speaking as the root's own agent; the toast goes too.
func TestNestedPermissionReachesTheRoot(t *testing.T) {
	h := newFB(t, config.Config{})
	top := h.launchFrom("ses_p", "top")
	mid := h.m.task(top).SessionID
	nested := h.launchFrom(mid, "nested")
	h.idleParent()
	h.oc("session.idle", fmt.Sprintf(`{"sessionID":%q}`, mid))
	eff := h.asks(h.m.task(nested).SessionID, "per_n")
	root := parentNotices(eff)
	require.Len(t, root, 1, "the user's session gets the line")
	require.Len(t, root[0].Parts, 2, "once")
	require.Contains(t, root[0].Parts[0].Text, `⏸ Agent "nested" waits for permission`)
	require.Contains(t, root[0].Parts[1].Text, nested)
	require.True(t, root[0].NoReply)
	require.Equal(t, h.m.task(top).ParentAgent, root[0].Agent)
	require.Len(t, prompts(eff, mid), 1, "and so does the task that launched it")
	require.Len(t, prompts(eff, mid)[0].Parts, 2, "once")
	require.Len(t, ofKind(eff, EffectToast), 1)
}
