package core

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

// restoreLeadAndN restores a lead and the task N its child launched, as a first process left
// them, in a new harness, and answers the status read with busy (JSON); it returns the new
// harness, the lead, N, the lead's child, N's child and the messages reads by session.
func restoreLeadAndN(t *testing.T, cfg config.Config, busy func(c, nc string) string) (h *fbHarness, lead, n, c, nc string, reads map[string]Effect) {
	first := newFB(t, cfg)
	lead, c = first.busyLead()
	n = first.launchFrom(c, "N")
	nc = first.m.task(n).SessionID
	var log strings.Builder
	for _, id := range []string{lead, n} {
		log.WriteString(HistoryLine(first.m.task(id).Task))
	}
	h = newFB(t, cfg)
	h.now = first.now + 1000
	_, eff := h.m.Restore(h.now, log.String())
	st := ofKind(eff, EffectStatus)
	require.Len(t, st, 1)
	eff = h.step(Event{Type: EventEffectDone, EffectID: st[0].ID, OK: true, Result: json.RawMessage(busy(c, nc))})
	reads = map[string]Effect{}
	for _, e := range ofKind(eff, EffectMessages) {
		reads[e.SessionID] = e
	}
	require.Len(t, reads, 2)
	return h, lead, n, c, nc, reads
}

// readAnswer is a messages read's answer: one assistant message, body added to its info.
func readAnswer(h *fbHarness, body string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`[{"info":{"id":"m1","role":"assistant","time":{"created":%d,"completed":%d}%s},"parts":[{"type":"text","text":"result N"}]}]`, h.now-500, h.now-400, body))
}

// After a restart, a lead whose messages tell of its failure does not cancel a task of its own
// whose messages are still being read: that one may have finished while OpenCode was down, and
// its result is kept; its notice is stored in the failed lead's child without waking it. One the
// read finds still at work is cancelled then.
func TestARestoredFailureLeavesItsOwnTasksToTheirReconcile(t *testing.T) {
	for _, finished := range []bool{true, false} {
		t.Run(fmt.Sprintf("finished meanwhile %v", finished), func(t *testing.T) {
			h, lead, n, c, nc, reads := restoreLeadAndN(t, config.Config{}, func(_, nc string) string {
				if finished {
					return `{}`
				}
				return fmt.Sprintf(`{%q:{"type":"busy"}}`, nc)
			})
			h.step(Event{Type: EventEffectDone, EffectID: reads[c].ID, OK: true, Result: readAnswer(h, `,"error":`+badRequest)})
			require.Equal(t, task.StatusError, h.status(lead))
			require.Equal(t, task.StatusRunning, h.status(n), "its end is still being read")
			if !finished {
				eff := h.step(Event{Type: EventEffectDone, EffectID: reads[nc].ID, OK: true, Result: json.RawMessage(`[]`)})
				require.Equal(t, task.StatusCancelled, h.status(n), "found at work under a failed lead")
				require.Equal(t, fmt.Sprintf(orphanReasonFmt, "APIError"), h.m.task(n).CancelReason)
				require.NotEmpty(t, ofKind(eff, EffectAbort))
				require.Empty(t, prompts(eff, c))
				return
			}
			eff := h.step(Event{Type: EventEffectDone, EffectID: reads[nc].ID, OK: true, Result: readAnswer(h, `,"finish":"stop"`)})
			require.Equal(t, task.StatusCompleted, h.status(n))
			require.Equal(t, "result N", h.m.task(n).Result)
			// Its notice waits for a read of the lead's child's messages (told before the crash?).
			var check []Effect
			for _, e := range ofKind(eff, EffectMessages) {
				if e.SessionID == c {
					check = append(check, e)
				}
			}
			require.Len(t, check, 1)
			eff = h.step(Event{Type: EventEffectDone, EffectID: check[0].ID, OK: true, Result: json.RawMessage(`[]`)})
			told := prompts(eff, c)
			require.Len(t, told, 1, "its notice is stored in the failed lead's child")
			require.True(t, told[0].NoReply, "without waking it: a session whose task is over answers no one")
		})
	}
}

// Three levels: a cancel of a restored lead (the user's, at once after the restart) takes N,
// whose reconcile is done and found it at work, but leaves M, under N, to its own read.
func TestACancelLeavesARestoredTaskBelowToItsReconcile(t *testing.T) {
	cfg := config.Config{MaxDepth: 3}
	first := newFB(t, cfg)
	lead, c := first.busyLead()
	n := first.launchFrom(c, "N")
	mid := first.m.task(n).SessionID
	m := first.launchFrom(mid, "M")
	mc := first.m.task(m).SessionID
	var log strings.Builder
	for _, id := range []string{lead, n, m} {
		log.WriteString(HistoryLine(first.m.task(id).Task))
	}
	h := newFB(t, cfg)
	h.now = first.now + 1000
	_, eff := h.m.Restore(h.now, log.String())
	st := ofKind(eff, EffectStatus)
	require.Len(t, st, 1)
	eff = h.step(Event{Type: EventEffectDone, EffectID: st[0].ID, OK: true,
		Result: json.RawMessage(fmt.Sprintf(`{%q:{"type":"busy"},%q:{"type":"busy"},%q:{"type":"busy"}}`, c, mid, mc))})
	reads := map[string]Effect{}
	for _, e := range ofKind(eff, EffectMessages) {
		reads[e.SessionID] = e
	}
	require.Len(t, reads, 3)
	h.step(Event{Type: EventEffectDone, EffectID: reads[c].ID, OK: true, Result: json.RawMessage(`[]`)})
	h.step(Event{Type: EventEffectDone, EffectID: reads[mid].ID, OK: true, Result: json.RawMessage(`[]`)})
	h.call(ToolCancel, fmt.Sprintf(`{"task_id":%q}`, lead))
	require.Equal(t, task.StatusCancelled, h.status(lead))
	require.Equal(t, task.StatusCancelled, h.status(n))
	require.Equal(t, task.StatusRunning, h.status(m), "still being read")
	h.step(Event{Type: EventEffectDone, EffectID: reads[mc].ID, OK: true, Result: readAnswer(h, `,"finish":"stop"`)})
	require.Equal(t, task.StatusCompleted, h.status(m), "its result, finished while OpenCode was down, is kept")
}

// restoreLeadAndUnbornN restores, in a new harness, a lead and the task N its child launched as
// if N's session never reached the history; it returns the harness, the lead, N and the
// restore's effects.
func restoreLeadAndUnbornN(t *testing.T) (h *fbHarness, lead, n string, eff []Effect) {
	first := newFB(t, config.Config{})
	lead, c := first.busyLead()
	n = first.launchFrom(c, "N")
	unborn := first.m.task(n).Task
	unborn.SessionID = ""
	h = newFB(t, config.Config{})
	h.now = first.now + 1000
	_, eff = h.m.Restore(h.now, HistoryLine(first.m.task(lead).Task)+HistoryLine(unborn))
	return h, lead, n, eff
}

// A restored task with no session on record looks for its child among its parent's children
// first: a lead that fails meanwhile does not cancel it (the child found may hold a result). Not
// found, it is cancelled rather than given a new child under a failed lead.
func TestARestoredTaskLookingForItsChildIsLeftToTheLook(t *testing.T) {
	h, lead, n, eff := restoreLeadAndUnbornN(t)
	children := ofKind(eff, EffectSessionChildren)
	require.Len(t, children, 1)
	st := ofKind(eff, EffectStatus)
	require.Len(t, st, 1)
	eff = h.step(Event{Type: EventEffectDone, EffectID: st[0].ID, OK: true, Result: json.RawMessage(`{}`)})
	read := ofKind(eff, EffectMessages)
	require.Len(t, read, 1)
	h.step(Event{Type: EventEffectDone, EffectID: read[0].ID, OK: true, Result: readAnswer(h, `,"error":`+badRequest)})
	require.Equal(t, task.StatusError, h.status(lead))
	require.Equal(t, task.StatusRunning, h.status(n), "still looking for its child")
	eff = h.step(Event{Type: EventEffectDone, EffectID: children[0].ID, OK: true, Result: json.RawMessage(`[]`)})
	require.Equal(t, task.StatusCancelled, h.status(n))
	require.Empty(t, ofKind(eff, EffectSessionCreate), "no new child under a failed lead")
}

// A restored task whose status read failed, to be asked again, is not cancelled by its parent
// task's failure meanwhile (here a timeout): the read to come says what it did.
func TestARestoredTaskAwaitingItsStatusIsNotCancelled(t *testing.T) {
	first := newFB(t, config.Config{})
	lead, c := first.busyLead()
	n := first.launchFrom(c, "N")
	first.m.task(lead).TimeoutMs = 60_000
	var log strings.Builder
	for _, id := range []string{lead, n} {
		log.WriteString(HistoryLine(first.m.task(id).Task))
	}
	for _, failed := range []bool{false, true} {
		h := newFB(t, config.Config{})
		h.now = first.now + 120_000 // past the lead's limit
		_, eff := h.m.Restore(h.now, log.String())
		st := ofKind(eff, EffectStatus)
		require.Len(t, st, 1)
		if failed {
			h.step(Event{Type: EventEffectDone, EffectID: st[0].ID, Error: "connection refused"})
		}
		h.fireDeadline(lead)
		require.Equal(t, task.StatusError, h.status(lead))
		require.Equal(t, task.StatusRunning, h.status(n), "failed read: %v", failed)
	}
}

// A restored task found at work under a lead that completed meanwhile goes on: only a task that
// did not complete takes its tasks with it.
func TestARestoredTaskUnderACompletedLeadGoesOn(t *testing.T) {
	h, lead, n, c, nc, reads := restoreLeadAndN(t, config.Config{}, func(_, nc string) string {
		return fmt.Sprintf(`{%q:{"type":"busy"}}`, nc)
	})
	h.step(Event{Type: EventEffectDone, EffectID: reads[c].ID, OK: true, Result: readAnswer(h, `,"finish":"stop"`)})
	require.Equal(t, task.StatusCompleted, h.status(lead))
	h.step(Event{Type: EventEffectDone, EffectID: reads[nc].ID, OK: true, Result: json.RawMessage(`[]`)})
	require.Equal(t, task.StatusRunning, h.status(n))
}

// A notice for a session whose task is over waits while that session is busy (its abort on its
// way): a noReply message to a busy session would cost it a turn all the same.
func TestANoticeToAnEndedBusyTaskWaitsForItsIdle(t *testing.T) {
	h, lead, n, c, nc, reads := restoreLeadAndN(t, config.Config{}, func(c, nc string) string {
		return fmt.Sprintf(`{%q:{"type":"busy"},%q:{"type":"busy"}}`, c, nc)
	})
	h.step(Event{Type: EventEffectDone, EffectID: reads[c].ID, OK: true, Result: json.RawMessage(`[]`)})
	h.busy(c)
	h.m.task(lead).TimeoutMs = 1
	h.fireDeadline(lead)
	require.Equal(t, task.StatusError, h.status(lead))
	require.Equal(t, task.StatusRunning, h.status(n), "still being read")
	eff := h.step(Event{Type: EventEffectDone, EffectID: reads[nc].ID, OK: true, Result: readAnswer(h, `,"finish":"stop"`)})
	require.Equal(t, task.StatusCompleted, h.status(n))
	for _, e := range ofKind(eff, EffectMessages) {
		if e.SessionID == c {
			eff = h.step(Event{Type: EventEffectDone, EffectID: e.ID, OK: true, Result: json.RawMessage(`[]`)})
		}
	}
	require.Empty(t, prompts(eff, c), "not while it is busy")
	told := prompts(h.oc("session.idle", fmt.Sprintf(`{"sessionID":%q}`, c)), c)
	require.Len(t, told, 1)
	require.True(t, told[0].NoReply)
}

// A restored task whose lead failed meanwhile is not given a start, whatever its reconcile finds
// short of a finished answer: never prompted (it would begin now), stopped (it would end as
// interrupted, a failure whose notice wakes), or failed meanwhile; it is cancelled.
func TestARestoredTaskUnderAFailedLeadIsNotStarted(t *testing.T) {
	for name, msgs := range map[string]string{
		"never prompted":   `[]`,
		"stopped":          `[{"info":{"id":"u1","role":"user","time":{"created":1}},"parts":[]}]`,
		"failed meanwhile": `[{"info":{"id":"m1","role":"assistant","time":{"created":1,"completed":2},"error":` + badRequest + `},"parts":[]}]`,
	} {
		t.Run(name, func(t *testing.T) {
			h, lead, n, c, nc, reads := restoreLeadAndN(t, config.Config{}, func(_, _ string) string { return `{}` })
			h.step(Event{Type: EventEffectDone, EffectID: reads[c].ID, OK: true, Result: readAnswer(h, `,"error":`+badRequest)})
			require.Equal(t, task.StatusError, h.status(lead))
			eff := h.step(Event{Type: EventEffectDone, EffectID: reads[nc].ID, OK: true, Result: json.RawMessage(msgs)})
			require.Equal(t, task.StatusCancelled, h.status(n))
			require.Empty(t, prompts(eff, nc), "not prompted")
			require.Empty(t, prompts(eff, c))
		})
	}
}

// A restored task with no session on record whose look for its child keeps failing is cancelled,
// its lead having failed meanwhile, rather than given a new child.
func TestARestoredTaskWhoseChildCannotBeLookedForIsCancelledUnderAFailedLead(t *testing.T) {
	h, lead, n, eff := restoreLeadAndUnbornN(t)
	look := ofKind(eff, EffectSessionChildren)[0]
	eff = h.step(Event{Type: EventEffectDone, EffectID: ofKind(eff, EffectStatus)[0].ID, OK: true, Result: json.RawMessage(`{}`)})
	h.step(Event{Type: EventEffectDone, EffectID: ofKind(eff, EffectMessages)[0].ID, OK: true, Result: readAnswer(h, `,"error":`+badRequest)})
	require.Equal(t, task.StatusError, h.status(lead))
	var out []Effect
	for try := 0; try <= childrenRetries; try++ {
		out = h.step(Event{Type: EventEffectDone, EffectID: look.ID, Error: "connection refused"})
		if try == childrenRetries {
			break
		}
		out = h.step(Event{Type: EventTimer, TimerID: ofKind(out, EffectTimerSet)[0].TimerID})
		look = ofKind(out, EffectSessionChildren)[0]
	}
	require.Equal(t, task.StatusCancelled, h.status(n))
	require.Empty(t, ofKind(out, EffectSessionCreate))
}

// The user interrupts their turn right after a restart, while a restored task's status is still
// being read: the task is left to that read. Found at work, or stopped, it is cancelled then for
// the interruption (not ended as an interrupted failure, whose notice would wake the session the
// user just stopped), and the user's session is told of it without a model turn.
func TestAnInterruptionBeforeTheReconcileCancelsAtIt(t *testing.T) {
	for name, found := range map[string][2]string{
		"at work": {`{%q:{"type":"busy"}}`, `[]`},
		"stopped": {`{}`, `[{"info":{"id":"u1","role":"user","time":{"created":1}},"parts":[]}]`},
	} {
		t.Run(name, func(t *testing.T) {
			first := newFB(t, config.Config{})
			n := first.launchFrom("ses_p", "N")
			nc := first.m.task(n).SessionID
			h := newFB(t, config.Config{})
			h.now = first.now + 1000
			_, eff := h.m.Restore(h.now, HistoryLine(first.m.task(n).Task))
			st := ofKind(eff, EffectStatus)
			require.Len(t, st, 1)
			h.busy("ses_p")
			h.abortTurn("ses_p")
			require.Equal(t, task.StatusRunning, h.status(n), "still being read")
			status := found[0]
			if strings.Contains(status, "%q") {
				status = fmt.Sprintf(status, nc)
			}
			eff = h.step(Event{Type: EventEffectDone, EffectID: st[0].ID, OK: true, Result: json.RawMessage(status)})
			reads := ofKind(eff, EffectMessages)
			require.Len(t, reads, 1)
			eff = h.all(func() {
				h.step(Event{Type: EventEffectDone, EffectID: reads[0].ID, OK: true, Result: json.RawMessage(found[1])})
				h.oc("session.idle", `{"sessionID":"ses_p"}`)
			})
			require.Equal(t, task.StatusCancelled, h.status(n))
			require.Equal(t, cascadeReason, h.m.task(n).CancelReason)
			require.NotEmpty(t, ofKind(eff, EffectAbort))
			told := prompts(eff, "ses_p")
			require.NotEmpty(t, told, "the user's session is told")
			for _, p := range told {
				require.True(t, p.NoReply, "without a model turn")
			}
		})
	}
}
