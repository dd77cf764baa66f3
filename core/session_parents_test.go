package core

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
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
