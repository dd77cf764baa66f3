package core

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
)

// A stall wakes a held child though its notice asks no turn (flushParent): once that message is
// answered, the child's outbox sends again (it waited for ever before).
func TestAStallThatWokeAHeldChildLeavesItsOutboxFree(t *testing.T) {
	h := newFB(t, warnAfter(60_000))
	_, c := h.busyLead()
	n1 := h.launchFrom(c, "N1")
	n2 := h.launchFrom(c, "N2")
	h.busy(h.m.task(n1).SessionID)
	h.busy(h.m.task(n2).SessionID)
	require.False(t, h.turnEnd("hook_1", c))
	h.holdPromptsTo = c
	h.now += 61_000
	h.work(h.m.task(n2).SessionID, "msg_w2", "prt_w2", "still going", false)
	h.step(Event{Type: EventTimer, TimerID: pollTimer})
	require.Len(t, h.heldPrompts, 1)
	require.False(t, h.heldPrompts[0].NoReply, "the stall wakes the held child")
	// N2 ends while that message is out: its notice queues behind it.
	sesN2 := h.m.task(n2).SessionID
	h.oc("message.part.updated", fmt.Sprintf(`{"part":{"id":"prt_x","sessionID":%q,"messageID":"msg_x","type":"text","text":"r2","time":{"end":%d}}}`, sesN2, h.now))
	h.oc("message.updated", fmt.Sprintf(`{"info":{"id":"msg_x","sessionID":%q,"role":"assistant","finish":"stop","time":{"created":%d,"completed":%d}}}`, sesN2, h.now, h.now+1))
	h.step(Event{Type: EventOpenCode, Event: &OpenCodeEvent{Type: "session.idle", Properties: json.RawMessage(fmt.Sprintf(`{"sessionID":%q}`, sesN2))}})
	require.Len(t, h.heldPrompts, 1, "N2's notice waits for the stall's message")
	h.step(Event{Type: EventEffectDone, EffectID: h.heldPrompts[0].ID, OK: true})
	b := h.m.outbox.Get(c)
	require.NotNil(t, b, "N2's notice is still queued")
	require.False(t, b.Waits(), "nothing is in flight: the outbox may send")
}

// Work of its own begun while a hold waited only for a message (it kept its slot) gives the slot
// to that work at the step's end.
func TestALaunchDuringAHoldForAMessageGetsTheSlot(t *testing.T) {
	h := newFB(t, config.Config{MaxConcurrentStarts: 1})
	lead, c := h.busyLead()
	h.call(ToolMessage, `{"task_id":"`+lead+`","message":"also check the tests"}`)
	require.False(t, h.turnEnd("hook_1", c))
	n := h.launchFrom(c, "N") // its tool ran while the hook waited
	require.False(t, h.m.task(n).Queued, "the held lead gave N its slot")
}

// A task waiting for its slot back goes on only with the holds owed nothing: a second, whose wake
// is not stored yet, waits for it.
func TestGoingOnLeavesAHoldStillOwed(t *testing.T) {
	h := newFB(t, config.Config{MaxConcurrentStarts: 1})
	_, c := h.busyLead()
	h.subagent(c, "ses_s1")
	h.subagent(c, "ses_s2")
	h.busy("ses_s1")
	h.busy("ses_s2")
	n1 := h.launchFrom("ses_s1", "N1")
	require.False(t, h.turnEnd("hook_1", "ses_s1"))
	n2 := h.launchFrom("ses_s2", "N2")
	h.answer(h.m.task(n1).SessionID, "", "result N1")
	require.False(t, h.m.task(n2).Queued, "N2 took the slot")
	q := h.launchFrom("ses_p", "Q")
	eff := h.all(func() { h.answer(h.m.task(n2).SessionID, "", "result N2") })
	require.Len(t, prompts(eff, "ses_s2"), 1, "N2's notice wakes its session, taken by OpenCode")
	require.False(t, h.m.task(q).Queued, "Q took the slot")
	h.userMessage("ses_s1", h.now)
	require.False(t, h.turnEnd("hook_2", "ses_s2"), "owed: its wake is not stored yet")
	eff = h.all(func() { h.answer(h.m.task(q).SessionID, "", "result Q") })
	require.True(t, replied(eff, "hook_1"))
	require.False(t, replied(eff, "hook_2"), "its wake is not in it yet")
	require.True(t, replied(h.userMessage("ses_s2", h.now), "hook_2"))
}

// A headless run's own session reported idle while held is let go without a cascade: its stop
// cancels its tasks quietly (headless.go).
func TestAHeadlessSessionsIdleWhileHeldCancelsNothing(t *testing.T) {
	h := newFB(t, headlessRun)
	h.busy("ses_p")
	a := h.launchFrom("ses_p", "A")
	require.False(t, h.turnEnd("hook_1", "ses_p"))
	eff := h.oc("session.status", `{"sessionID":"ses_p","status":{"type":"idle"}}`)
	require.True(t, replied(eff, "hook_1"))
	require.False(t, h.m.task(a).Status.Terminal(), "A runs on until the run's stop")
}
