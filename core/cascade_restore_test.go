package core

import (
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/stretchr/testify/require"
)

// After a crash, each task of an interrupted turn's ⊘ line comes back as its own notice, to the
// session the line went to: a cancelled grandchild's goes to the interrupted parent, not to the
// session of the child cancelled with it, where no turn will read it.
func TestCascadeNoticesComeBackToTheInterruptedSession(t *testing.T) {
	h := newFB(t, config.Config{MaxDepth: 3})
	child := h.launchFrom("ses_p", "child")
	grand := h.launchFrom(h.m.task(child).SessionID, "grandchild")
	own := h.launchFrom(h.m.task(grand).SessionID, "its own") // a third level: still the parent's
	h.busy("ses_p")
	require.Empty(t, parentNotices(h.abortTurn("ses_p")), "the parent is busy: the ⊘ line is owed")

	var log strings.Builder
	for _, id := range []string{child, grand, own} {
		log.WriteString(HistoryLine(h.m.task(id).Task))
	}
	m := NewMachine(config.Config{})
	_, effects := m.Restore(h.now+1000, log.String())
	var read []string
	for _, e := range ofKind(effects, EffectMessages) {
		read = append(read, e.SessionID)
	}
	require.Equal(t, []string{"ses_p"}, read, "every owed notice goes to the interrupted session")
	require.Equal(t, "ses_p", m.owedTo(m.task(grand)))
	require.Equal(t, "ses_p", m.owedTo(m.task(own)))
}
