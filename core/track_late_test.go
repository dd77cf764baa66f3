package core

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

// spentAt is spent with the message's creation time given: an update told after the task ended
// of a call that began before it.
func (h *fbHarness) spentAt(session, msgID string, input int, cost float64, created int64) []Effect {
	return h.oc("message.updated", fmt.Sprintf(`{"info":{"id":%q,"sessionID":%q,"role":"assistant","tokens":{"input":%d,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"cost":%v,"time":{"created":%d}}}`, msgID, session, input, cost, created))
}

// A cancel lands while the child and a subagent below it are each in a model call. OpenCode
// writes those calls' tokens as the abort lands, after the end: they are the task's, counted and
// written, and stop nothing; a call begun after the end (the user talking to the child's session)
// is not the task's.
func TestSpendingToldAfterTheEndIsCounted(t *testing.T) {
	h := newFB(t, config.Config{})
	id := h.launchWith("late", `,"budget":{"tokens":1000}`).Metadata["taskId"].(string)
	ses := h.m.task(id).SessionID
	h.oc("session.created", fmt.Sprintf(`{"info":{"id":"ses_sub","parentID":%q}}`, ses))
	h.spent(ses, "msg_1", 100, 0.01, "tool-calls")
	callAt, subAt := h.now, h.now
	h.spentAt(ses, "msg_2", 10, 0.001, callAt)       // the call under way
	h.spentAt("ses_sub", "msg_s1", 10, 0.001, subAt) // the subagent's, under way
	h.call(ToolCancel, fmt.Sprintf(`{"task_id":%q}`, id))
	tk := h.m.task(id)
	require.Equal(t, task.StatusCancelled, tk.Status)
	tokens, _ := tk.Usage()
	require.EqualValues(t, 120, tokens.Input)

	h.effects = nil
	h.spentAt(ses, "msg_2", 900, 0.09, callAt)         // the aborted call's last figures
	h.spentAt("ses_sub", "msg_s1", 300, 0.03, subAt)   // and the subagent's
	h.spentAt(ses, "msg_3", 5000, 0.5, h.now)          // begun after the end: not the task's
	h.spentAt("ses_sub", "msg_s2", 5000, 0.5, h.now+1) // nor the subagent's next call
	h.spentAt(ses, "msg_4", 5000, 0.5, 0)              // with no time, it cannot be placed
	tk = h.m.task(id)
	tokens, cost := tk.Usage()
	require.EqualValues(t, 1300, tokens.Input, "the calls under way at the cancel, with their last figures")
	require.InDelta(t, 0.13, cost, 1e-9)
	require.Equal(t, task.StatusCancelled, tk.Status, "past its budget, told after the end: nothing is stopped")
	require.Nil(t, tk.Error)
	require.Empty(t, ofKind(h.effects, EffectAbort))
	var written string
	for _, e := range ofKind(h.writeProgress(), EffectHistoryAppend) {
		written += e.Line
	}
	require.Contains(t, written, `"input":1300`, "the record is written with them")
}
