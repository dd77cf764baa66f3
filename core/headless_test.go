package core

import (
	"fmt"
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

var headlessRun = config.Config{Headless: config.HeadlessConfig{Active: true}}

// turnEnd is the host's hook at the end of one of session's text parts; it reports whether the
// core answered it at once.
func (h *fbHarness) turnEnd(callID, session string) bool {
	eff := h.step(Event{Type: EventToolCall, CallID: callID, Tool: HookTurnEnd, SessionID: session})
	return replied(eff, callID)
}

func replied(eff []Effect, callID string) bool {
	for _, e := range ofKind(eff, EffectToolReply) {
		if e.CallID == callID {
			return true
		}
	}
	return false
}

// all runs f and returns every effect of the steps it took.
func (h *fbHarness) all(f func()) []Effect {
	before := len(h.effects)
	f()
	return append([]Effect{}, h.effects[before:]...)
}

// userMessage is OpenCode storing a user message (a notice) in session, created at created.
func (h *fbHarness) userMessage(session string, created int64) []Effect {
	return h.oc("message.updated", fmt.Sprintf(`{"info":{"id":"msg_u%d","sessionID":%q,"role":"user","time":{"created":%d}}}`, created, session, created))
}

// In a headless run, the end of the parent's answer waits while its tasks run, and goes on once
// the notice that wakes it (the batch's last) is stored in the session; a turn with no task, and
// another session's turn, go on at once.
func TestHeadlessTurnWaitsForItsTasks(t *testing.T) {
	h := newFB(t, headlessRun)
	require.True(t, h.turnEnd("hook_0", "ses_p"), "no task: the turn ends as it would")
	a := h.launchFrom("ses_p", "A")
	b := h.launchFrom("ses_p", "B")
	require.False(t, h.turnEnd("hook_1", "ses_p"), "held while A and B run")
	require.True(t, h.turnEnd("hook_x", "ses_other"), "another session's turn is not held")

	eff := h.all(func() { h.answer(h.m.task(a).SessionID, "", "result A") })
	require.Equal(t, task.StatusCompleted, h.status(a))
	require.False(t, replied(eff, "hook_1"), "B still runs")

	eff = h.all(func() { h.answer(h.m.task(b).SessionID, "", "result B") })
	notices := parentNotices(eff)
	require.Len(t, notices, 1, "the batch's notice wakes the busy parent")
	require.False(t, notices[0].NoReply)
	var texts []string
	for _, p := range notices[0].Parts {
		texts = append(texts, p.Text)
	}
	require.Contains(t, strings.Join(texts, "\n"), "result A", "one message for the batch")
	require.Contains(t, strings.Join(texts, "\n"), "result B")
	require.False(t, replied(eff, "hook_1"), "accepted is not yet stored: the loop must see it")

	eff = h.userMessage("ses_p", h.now)
	require.True(t, replied(eff, "hook_1"), "the notice is in the session: its loop goes on with it")
	require.True(t, h.turnEnd("hook_2", "ses_p"), "the answer to the notice ends the run")
}

// A notice that wakes the parent while other tasks still run (a failure) releases the held turn,
// so the parent answers it; its next answer is held again for the tasks still running.
func TestHeadlessTurnGoesOnForAWakingNotice(t *testing.T) {
	h := newFB(t, headlessRun)
	a := h.launchFrom("ses_p", "A")
	b := h.launchFrom("ses_p", "B")
	require.False(t, h.turnEnd("hook_1", "ses_p"))
	h.answer(h.m.task(a).SessionID, `{"name":"APIError","data":{"message":"bad request","statusCode":400}}`, "")
	require.Equal(t, task.StatusError, h.status(a))
	eff := h.userMessage("ses_p", h.now)
	require.True(t, replied(eff, "hook_1"), "the failure's notice woke the parent")
	require.False(t, h.turnEnd("hook_2", "ses_p"), "B still runs")
	require.Equal(t, task.StatusRunning, h.status(b))
}

// With waitForTasks off, or outside a headless run, nothing is held; an interrupted turn and a
// deleted session release what was held.
func TestHeadlessTurnNotHeld(t *testing.T) {
	off := newFB(t, config.Config{Headless: config.HeadlessConfig{Active: true, WaitForTasks: config.Bool(false)}})
	off.launchFrom("ses_p", "A")
	require.True(t, off.turnEnd("hook_1", "ses_p"))
	tui := newFB(t, config.Config{})
	tui.launchFrom("ses_p", "A")
	require.True(t, tui.turnEnd("hook_1", "ses_p"))

	h := newFB(t, headlessRun)
	h.launchFrom("ses_p", "A")
	require.False(t, h.turnEnd("hook_1", "ses_p"))
	h.busy("ses_p")
	require.True(t, replied(h.abortTurn("ses_p"), "hook_1"))
	h.launchFrom("ses_q", "B")
	require.False(t, h.turnEnd("hook_2", "ses_q"))
	require.True(t, replied(h.oc("session.deleted", `{"info":{"id":"ses_q"}}`), "hook_2"))
	h.launchFrom("ses_r", "C")
	require.False(t, h.turnEnd("hook_3", "ses_r"))
	eff := h.oc("session.error", `{"sessionID":"ses_r","error":{"name":"UnknownError","data":{"message":"prompt_async failed"}}}`)
	require.True(t, replied(eff, "hook_3"), "a notice OpenCode failed to store will not come")
}

// The process's stop cancels every task of a headless run, nested ones too, with their partial
// work and no notice, and releases what was held; its answer comes after the history lines.
func TestHeadlessStopCancelsTasks(t *testing.T) {
	h := newFB(t, headlessRun)
	a := h.launchFrom("ses_p", "A")
	h.work(h.m.task(a).SessionID, "msg_w", "prt_w", "half done", true)
	nested := h.launchFrom(h.m.task(a).SessionID, "A's own")
	require.False(t, h.turnEnd("hook_1", "ses_p"))

	eff := h.step(Event{Type: EventToolCall, CallID: "stop", Tool: HookStopping})
	for _, id := range []string{a, nested} {
		require.Equal(t, task.StatusCancelled, h.status(id))
		require.Equal(t, stoppedReason, h.m.task(id).CancelReason)
	}
	require.Equal(t, "half done", h.m.task(a).Partial.Text)
	require.True(t, replied(eff, "hook_1"))
	require.True(t, replied(eff, "stop"))
	require.Empty(t, parentNotices(eff), "the process ends: no notice")
	last := -1
	for i, e := range eff {
		if e.Kind == EffectHistoryAppend && last < 0 {
			last = i
		}
		if e.Kind == EffectToolReply && e.CallID == "stop" {
			require.GreaterOrEqual(t, last, 0, "the cancellations are written")
			require.Less(t, last, i, "the cancellations are written before the answer")
		}
	}

	tui := newFB(t, config.Config{})
	b := tui.launchFrom("ses_p", "B")
	tui.step(Event{Type: EventToolCall, CallID: "stop", Tool: HookStopping})
	require.Equal(t, task.StatusRunning, tui.status(b), "outside a headless run the restore decides")
}

// In a headless run a stall notice wakes the waiting parent, whose model decides: the held turn
// goes on once the notice is in the session, though the task still runs.
func TestHeadlessStallWakesTheParent(t *testing.T) {
	cfg := warnAfter(120_000)
	cfg.Headless.Active = true
	h := newFB(t, cfg)
	id := h.launch()
	h.busy(id)
	h.work(id, "msg_a", "prt_a", "reading the code", true)
	require.False(t, h.turnEnd("hook_1", "ses_p"))
	notices := parentNotices(h.wait(121_000))
	require.Len(t, notices, 1)
	require.False(t, notices[0].NoReply, "the stall wakes the parent")
	require.True(t, replied(h.userMessage("ses_p", h.now), "hook_1"))
	require.False(t, h.turnEnd("hook_2", "ses_p"), "the task still runs: the next answer waits again")
}
