package core

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

// busyLead launches "lead" from the user's session and returns it and its child, at work.
func (h *fbHarness) busyLead() (lead, child string) {
	lead = h.launchFrom("ses_p", "lead")
	child = h.m.task(lead).SessionID
	h.busy(child)
	return lead, child
}

// A task's child that launched a task of its own and answered is held until the notice of that
// task is stored in it; its next answer, to the notice, is the task's result. The user's own
// session is not held outside a headless run.
func TestAChildsTurnWaitsForItsOwnTasks(t *testing.T) {
	h := newFB(t, config.Config{})
	lead, c := h.busyLead()
	require.True(t, h.turnEnd("hook_0", c), "no task of its own: its turn ends as it would")
	n := h.launchFrom(c, "N")
	require.True(t, h.turnEnd("hook_p", "ses_p"), "the user's session is not held: background work is the point")
	heldAt := h.now
	h.oc("message.part.updated", fmt.Sprintf(`{"part":{"id":"prt_held","sessionID":%q,"messageID":"msg_held","type":"text","text":"launched it","time":{"end":%d}}}`, c, heldAt))
	require.False(t, h.turnEnd("hook_1", c), "held while N runs")

	eff := h.all(func() { h.answer(h.m.task(n).SessionID, "", "result N") })
	wakes := prompts(eff, c)
	require.Len(t, wakes, 1, "N's notice goes to the lead's child")
	require.False(t, wakes[0].NoReply, "and wakes it")
	require.False(t, replied(eff, "hook_1"), "accepted is not yet stored: the loop must see it")
	require.Equal(t, task.StatusRunning, h.status(lead))

	eff = h.userMessage(c, h.now)
	require.True(t, replied(eff, "hook_1"), "the notice is in the child: its loop goes on with it")
	// The step closes: its text part is sent again, then its message, complete.
	h.oc("message.part.updated", fmt.Sprintf(`{"part":{"id":"prt_held","sessionID":%q,"messageID":"msg_held","type":"text","text":"launched it","time":{"end":%d}}}`, c, heldAt))
	h.oc("message.updated", fmt.Sprintf(`{"info":{"id":"msg_held","sessionID":%q,"role":"assistant","finish":"stop","time":{"created":%d,"completed":%d}}}`, c, heldAt, h.now))
	require.Equal(t, task.StatusRunning, h.status(lead), "the held answer is older than the notice: no result")
	h.answer(c, "", "the lead's answer, with N's result")
	require.Equal(t, task.StatusCompleted, h.status(lead))
	require.Equal(t, "the lead's answer, with N's result", h.m.task(lead).Result)
}

// A subagent OpenCode's own task tool runs (here under the user's session) is held the same way:
// its answer is the native tool's result.
func TestANativeSubagentsTurnWaitsForItsTasks(t *testing.T) {
	h := newFB(t, config.Config{})
	h.subagent("ses_p", "ses_sub")
	n := h.launchFrom("ses_sub", "N")
	require.False(t, h.turnEnd("hook_1", "ses_sub"))
	eff := h.all(func() { h.answer(h.m.task(n).SessionID, "", "result N") })
	require.False(t, replied(eff, "hook_1"))
	require.True(t, replied(h.userMessage("ses_sub", h.now), "hook_1"))
}

// Under maxConcurrentStarts, a held child's task gives its slot to the tasks it launched (they
// would otherwise wait for ever); once nothing is owed it waits for a slot as a queued task does,
// and its child goes on when one frees. A task launched meanwhile elsewhere may take the slot
// first: the limit is never passed.
func TestAHeldChildsTaskGivesUpItsSlot(t *testing.T) {
	h := newFB(t, config.Config{MaxConcurrentStarts: 1})
	lead, c := h.busyLead()
	n := h.launchFrom(c, "N")
	require.True(t, h.m.task(n).Queued, "the lead holds the only slot")
	require.False(t, h.turnEnd("hook_1", c))
	require.False(t, h.m.task(n).Queued, "the held lead's slot went to its own task")

	q := h.launchFrom("ses_p", "Q")
	require.True(t, h.m.task(q).Queued, "N has the slot")
	h.answer(h.m.task(n).SessionID, "", "result N")
	require.False(t, h.m.task(q).Queued, "the notice is not stored yet: the slot went to Q")

	eff := h.userMessage(c, h.now)
	require.False(t, replied(eff, "hook_1"), "nothing is owed, but Q has the slot")
	require.NotNil(t, h.m.task(lead).Waiting, "the lead waits in the queue")
	require.Equal(t, task.StatusRunning, h.status(lead))

	eff = h.all(func() { h.answer(h.m.task(q).SessionID, "", "result Q") })
	require.True(t, replied(eff, "hook_1"), "Q's slot is the lead's: its child goes on")
	require.Nil(t, h.m.task(lead).Waiting)
}

// Waiting for its own tasks is neither a stall nor a silent attempt; the task's own timeout
// still runs.
func TestAHeldChildIsNoStall(t *testing.T) {
	h := newFB(t, warnAfter(60_000))
	lead, c := h.busyLead()
	h.launchFrom(c, "N")
	require.False(t, h.turnEnd("hook_1", c))
	h.wait(200_000)
	require.Zero(t, h.m.task(lead).StalledSince, "the lead waits for N: no stall")
	require.Equal(t, task.StatusRunning, h.status(lead))
}

// A wake the outbox gave up on holds no turn: with nothing else under way, the session goes on.
func TestAHoldWaitsForNoWakeGivenUp(t *testing.T) {
	h := newFB(t, config.Config{})
	h.subagent("ses_p", "ses_sub")
	n := h.launchFrom("ses_sub", "N")
	require.False(t, h.turnEnd("hook_1", "ses_sub"))
	h.promptErr = "connection refused"
	eff := h.all(func() { h.answer(h.m.task(n).SessionID, "", "result N") })
	for i := 0; i < 40 && !replied(eff, "hook_1"); i++ {
		// Each retry reads the session's messages first (the notice may have been stored).
		for _, e := range ofKind(eff, EffectMessages) {
			eff = append(eff, h.step(Event{Type: EventEffectDone, EffectID: e.ID, OK: true, Result: json.RawMessage(`[]`)})...)
		}
		if replied(eff, "hook_1") {
			break
		}
		h.now += 600_000
		eff = h.step(Event{Type: EventTimer, TimerID: noticeRetryPrefix + "ses_sub"})
	}
	require.True(t, replied(h.effects, "hook_1"), "the notice was given up: nothing will come")
}

// A held child is no silent model: the attempt timeout waits for its tasks too.
func TestAHeldChildIsNoSilentAttempt(t *testing.T) {
	cfg := chainAB
	cfg.Fallback.AttemptTimeoutMs = 60_000
	h := newFB(t, cfg)
	lead, c := h.busyLead()
	h.launchFrom(c, "N")
	require.False(t, h.turnEnd("hook_1", c))
	h.now += 600_000
	eff := h.step(Event{Type: EventTimer, TimerID: attemptTimerPrefix + lead})
	require.Empty(t, ofKind(eff, EffectAbort), "ten minutes waiting for its own task is not a silent model")
	require.Equal(t, task.StatusRunning, h.status(lead))
}

// A message to a held child is read at once: the hold ends once it is stored, and the child's
// next answer is held again while its task runs.
func TestAMessageToAHeldChildIsReadAtOnce(t *testing.T) {
	h := newFB(t, config.Config{})
	lead, c := h.busyLead()
	h.launchFrom(c, "N")
	require.False(t, h.turnEnd("hook_1", c))
	h.call(ToolMessage, `{"task_id":"`+lead+`","message":"also check the tests"}`)
	eff := h.userMessage(c, h.now)
	require.True(t, replied(eff, "hook_1"), "the message is in the child: its loop goes on with it")
	require.False(t, h.turnEnd("hook_2", c), "its answer to it waits for N again")
}
