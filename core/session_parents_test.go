package core

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

func TestSessionParentsKeepWhatIsReadAndForgetTheRest(t *testing.T) {
	var s sessionParents
	s.set("ses_live", "ses_child")
	s.set("ses_idle", "ses_child")
	for i := range maxSessionsBelow {
		s.set(fmt.Sprint("ses_", i), "ses_root")
		if i%(maxSessionsBelow/4) == 0 {
			require.Equal(t, "ses_child", s.get("ses_live"), i)
		}
	}
	require.Equal(t, "ses_child", s.get("ses_live"), "read within each generation: kept")
	require.Empty(t, s.get("ses_idle"), "never read for two generations: forgotten")
	require.LessOrEqual(t, len(s.cur)+len(s.old), maxSessionsBelow)
	s.forget("ses_live")
	require.Empty(t, s.get("ses_live"))
}

// A subagent at work below a task's child stays traced to it however many sessions the user's
// OpenCode creates meanwhile (each event of the subagent reads its way up); a deleted session's
// way is forgotten.
func TestASubagentAtWorkStaysTracedPastTheBound(t *testing.T) {
	h := newFB(t, config.Config{MaxDepth: 1})
	top := h.launchFrom("ses_p", "top")
	h.subagent(h.m.task(top).SessionID, "ses_sub")
	for i := range 2 * maxSessionsBelow {
		h.subagent("ses_p", fmt.Sprint("ses_user_", i))
		if i%1000 == 0 {
			h.stepDone("ses_sub", fmt.Sprint("prt_", i), "tool-calls")
		}
	}
	require.Equal(t, 2*maxSessionsBelow/1000+1, h.m.task(top).Steps, "every step of the subagent counted")
	r := h.launchTry("ses_sub", "deep")
	require.Contains(t, r.Error, "nesting limit reached")
	h.oc("session.deleted", `{"info":{"id":"ses_sub"}}`)
	require.Nil(t, h.m.taskBelow("ses_sub"))
}

// A read from the older generation never rotates: a walk reading two links there finds both.
func TestSessionParentsReadingTheOlderKeepsItWhole(t *testing.T) {
	var s sessionParents
	s.set("ses_sub2", "ses_sub1")
	s.set("ses_sub1", "ses_child")
	for i := range maxSessionsBelow - 2 {
		s.set(fmt.Sprint("ses_", i), "ses_root")
	}
	require.Len(t, s.cur, maxSessionsBelow/2, "the newer is full, the two links in the older")
	require.Equal(t, "ses_sub1", s.get("ses_sub2"))
	require.Equal(t, "ses_child", s.get("ses_sub1"))
}

// The way above a task at work stays while the subagent that launched it is idle, however many
// sessions come meanwhile: an interrupt of the user's turn still takes the task.
func TestTheWayAboveATaskAtWorkIsKept(t *testing.T) {
	h := newFB(t, config.Config{})
	h.subagent("ses_p", "ses_usersub")
	id := h.launchFrom("ses_usersub", "from the user's subagent")
	for i := range 2 * maxSessionsBelow {
		h.subagent("ses_other", fmt.Sprint("ses_x", i))
	}
	h.busy("ses_p")
	h.abortTurn("ses_p")
	require.Equal(t, task.StatusCancelled, h.m.task(id).Status)
}
