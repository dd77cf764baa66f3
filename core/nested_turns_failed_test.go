package core

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

// modelFails is what OpenCode 1.18.33 sends when session's model call fails for good
// (SessionProcessor.halt): the session's error, its idle, then its answer written with the error.
func (h *fbHarness) modelFails(session, errJSON string) {
	h.oc("session.error", fmt.Sprintf(`{"sessionID":%q,"error":%s}`, session, errJSON))
	h.oc("session.status", fmt.Sprintf(`{"sessionID":%q,"status":{"type":"idle"}}`, session))
	h.oc("session.idle", fmt.Sprintf(`{"sessionID":%q}`, session))
	h.failedAnswer(session, errJSON)
}

// failedAnswer is session's answer written with errJSON as its error.
func (h *fbHarness) failedAnswer(session, errJSON string) []Effect {
	return h.oc("message.updated", fmt.Sprintf(`{"info":{"id":"msg_failed_%d","sessionID":%q,"role":"assistant","error":%s,"time":{"created":%d,"completed":%d}}}`,
		h.now, session, errJSON, h.now-100, h.now))
}

// storeFailed is OpenCode's report of a notice it accepted and then failed to store.
func (h *fbHarness) storeFailed(session string) {
	h.oc("session.error", fmt.Sprintf(`{"sessionID":%q,"error":{"name":"UnknownError","data":{"message":"prompt_async failed"}}}`, session))
}

const contentFiltered = `{"name":"ContentFilterError","data":{"message":"The response was blocked by the provider's content filter"}}`

// A native subagent whose model failed is done: its tool call failed, and its answers reach no
// one. The tasks it launched (and theirs) are cancelled as an interrupted turn's are, its children
// aborted, and it is told in one line that wakes no model turn; the tasks of the session above it
// run on. With cancelOnParentAbort off they run on too, as after an abort.
func TestAFailedNativeSubagentsTasksAreCancelled(t *testing.T) {
	noCascade := false
	cases := []struct {
		name      string
		cfg       config.Config
		underTask bool // the subagent runs under a task's child, not the user's session
		held      bool // its turn was held for its tasks, and a failure's notice woke it
		fail      func(h *fbHarness, session string)
		errName   string
		cancelled bool
	}{
		{name: "under the user's session", fail: func(h *fbHarness, s string) { h.modelFails(s, badRequest) }, errName: "APIError", cancelled: true},
		{name: "under a task's child", cfg: config.Config{MaxDepth: 3}, underTask: true, fail: func(h *fbHarness, s string) { h.modelFails(s, rateLimited) }, errName: "APIError", cancelled: true},
		{name: "after its held turn was woken", cfg: config.Config{MaxDepth: 3}, underTask: true, held: true, fail: func(h *fbHarness, s string) { h.modelFails(s, badRequest) }, errName: "APIError", cancelled: true},
		{name: "its answer's error before its idle", fail: func(h *fbHarness, s string) {
			// A content filter's stop: the answer is written, then the error and the idle.
			h.failedAnswer(s, contentFiltered)
			h.oc("session.error", fmt.Sprintf(`{"sessionID":%q,"error":%s}`, s, contentFiltered))
			h.oc("session.idle", fmt.Sprintf(`{"sessionID":%q}`, s))
		}, errName: "ContentFilterError", cancelled: true},
		{name: "cancelOnParentAbort off", cfg: config.Config{CancelOnParentAbort: &noCascade}, fail: func(h *fbHarness, s string) { h.modelFails(s, badRequest) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newFB(t, tc.cfg)
			parent, lead := "ses_p", ""
			if tc.underTask {
				lead, parent = h.busyLead()
			}
			own := h.launchFrom(parent, "own")
			h.subagent(parent, "ses_sub")
			h.busy("ses_sub")
			n := h.launchFrom("ses_sub", "N")
			grand := h.launchFrom(h.m.task(n).SessionID, "N's own")
			if tc.held {
				woke := h.launchFrom("ses_sub", "W")
				require.False(t, h.turnEnd("hook_1", "ses_sub"))
				eff := h.all(func() { h.answer(h.m.task(woke).SessionID, badRequest, "") })
				require.Len(t, prompts(eff, "ses_sub"), 1, "W's failure wakes the held subagent")
				require.True(t, replied(h.userMessage("ses_sub", h.now), "hook_1"))
				h.busy("ses_sub")
			}

			eff := h.all(func() { tc.fail(h, "ses_sub") })
			require.Equal(t, task.StatusRunning, h.status(own), "the parent's own task runs on")
			require.Empty(t, prompts(eff, parent), "the parent is told nothing: its tool call failed")
			if lead != "" {
				require.Equal(t, task.StatusRunning, h.status(lead))
			}
			if !tc.cancelled {
				require.Equal(t, task.StatusRunning, h.status(n))
				require.Empty(t, prompts(eff, "ses_sub"))
				return
			}
			for _, id := range []string{n, grand} {
				require.Equal(t, task.StatusCancelled, h.status(id), id)
			}
			require.Equal(t, fmt.Sprintf(subagentFailedReasonFmt, tc.errName), h.m.task(n).CancelReason)
			var aborted []string
			for _, e := range ofKind(eff, EffectAbort) {
				aborted = append(aborted, e.SessionID)
			}
			require.Contains(t, aborted, h.m.task(n).SessionID, "N's child is stopped")
			lines := prompts(eff, "ses_sub")
			require.Len(t, lines, 1, "one line for them")
			require.True(t, lines[0].NoReply, "that wakes no model turn")
			require.Contains(t, lines[0].Parts[0].Text, `"N"`)
			require.Contains(t, lines[0].Parts[0].Text, "Model failed: 2 background tasks cancelled", "the user sees why")
			require.True(t, strings.HasPrefix(lines[0].Parts[1].Text, turnFailed), "a resumed subagent reads why: %s", lines[0].Parts[1].Text)

			eff = h.all(func() { h.answer(h.m.task(n).SessionID, "", "N's late answer") })
			require.Empty(t, prompts(eff, "ses_sub"), "a cancelled task's late answer wakes nothing")
		})
	}
}

// Only a failed answer ends the subagent's turn. A session error alone does not: OpenCode reports
// so a notice it took and failed to store (the turn goes on, or the session stays idle) and an
// overflow it then compacts. Nor does the user's own session's failure end its background work.
func TestAnErrorThatEndsNoSubagentTurnCancelsNothing(t *testing.T) {
	cases := []struct {
		name    string
		session string
		then    func(h *fbHarness, session string)
	}{
		{"a notice it failed to store, held", "ses_sub", func(h *fbHarness, s string) {
			require.False(t, h.turnEnd("hook_1", s))
			h.storeFailed(s)
			h.answer(s, "", "launched N") // the held step closes, and the turn with it
		}},
		{"a notice it failed to store, idle", "ses_sub", func(h *fbHarness, s string) {
			h.oc("session.idle", fmt.Sprintf(`{"sessionID":%q}`, s))
			h.storeFailed(s)
		}},
		{"an overflow it compacts", "ses_sub", func(h *fbHarness, s string) {
			h.oc("session.error", fmt.Sprintf(`{"sessionID":%q,"error":{"name":"ContextOverflowError","data":{"message":"too long"}}}`, s))
		}},
		{"the user's session's model failed", "ses_p", func(h *fbHarness, s string) { h.modelFails(s, badRequest) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newFB(t, config.Config{})
			h.subagent("ses_p", "ses_sub")
			h.busy(tc.session)
			n := h.launchFrom(tc.session, "N")
			tc.then(h, tc.session)
			require.Equal(t, task.StatusRunning, h.status(n))
			require.Empty(t, h.m.task(n).CancelReason)
		})
	}
}

// A task's child is a session below its parent too, and its failure stays its task's: a chain
// moves the task to its next model with its tasks at work, and a task that fails takes them
// with it for its own reason (orphans.go).
func TestATaskChildsFailureStaysItsTasks(t *testing.T) {
	cases := []struct {
		name   string
		cfg    config.Config
		err    string
		lead   task.Status
		n      task.Status
		reason string
	}{
		{"a chain moves on", chainAB, rateLimited, task.StatusRunning, task.StatusRunning, ""},
		{"its only model failed", config.Config{}, badRequest, task.StatusError, task.StatusCancelled, fmt.Sprintf(orphanReasonFmt, "APIError")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newFB(t, tc.cfg)
			lead, c := h.busyLead()
			h.subagent("ses_p", c) // OpenCode announces the child under its parent
			n := h.launchFrom(c, "N")
			h.answer(c, tc.err, "")
			require.Equal(t, tc.lead, h.status(lead))
			require.Equal(t, tc.n, h.status(n))
			require.Equal(t, tc.reason, h.m.task(n).CancelReason)
		})
	}
}
