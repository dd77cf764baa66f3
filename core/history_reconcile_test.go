package core

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// restoredOnA is a task at work on A (chain A, B), as the history holds it.
func restoredOnA(status task.Status, attempts []task.FallbackAttempt) task.Task {
	return task.Task{ID: "ses_r", ParentSessionID: "ses_p", ParentMessageID: "msg_p", BatchID: "msg_p", Description: "survey", Prompt: "look around",
		Agent: "general", Status: status, StartedAt: 900_000, Depth: 1,
		Progress: task.Progress{LastTools: []string{}, LastUpdate: 900_000},
		Models:   []string{"mock/mock-a", "mock/mock-b"}, Model: "mock/mock-a",
		FallbackInfo: &task.FallbackInfo{Attempts: attempts, TotalAttempts: len(attempts)}}
}

// restoreAndReconcile restores the task, answers session.status with busyJSON and the reconcile's
// messages read with msgs; it returns every effect seen.
func (h *fbHarness) restoreAndReconcile(tk task.Task, busyJSON, msgs string) []Effect {
	_, eff := h.m.Restore(h.now, HistoryLine(tk))
	all := append([]Effect{}, eff...)
	st := ofKind(eff, EffectStatus)
	require.Len(h.t, st, 1)
	eff = h.step(Event{Type: EventEffectDone, EffectID: st[0].ID, OK: true, Result: json.RawMessage(busyJSON)})
	all = append(all, eff...)
	rd := ofKind(eff, EffectMessages)
	require.Len(h.t, rd, 1)
	eff = h.step(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true, Result: json.RawMessage(msgs)})
	return append(all, eff...)
}

func timersNamed(effects []Effect, id string) []Effect {
	var out []Effect
	for _, e := range effects {
		if e.Kind == EffectTimerSet && e.TimerID == id {
			out = append(out, e)
		}
	}
	return out
}

// A task at work on A when the plugin reloaded (the child still busy) is watched for silence
// again: timers do not outlive the host, and without one a model that hangs after the reload
// would never be left for B.
func TestRestoredAttemptIsWatchedForSilence(t *testing.T) {
	h := newFB(t, chainAB)
	tk := restoredOnA(task.StatusRunning, []task.FallbackAttempt{{Model: "mock/mock-a", Timestamp: 900_000}})
	all := h.restoreAndReconcile(tk, `{"ses_r":{"type":"busy"}}`,
		`[{"info":{"id":"m1","role":"user","time":{"created":900001}},"parts":[]}]`)
	got, _ := h.m.Task("ses_r")
	require.Equal(t, task.StatusRunning, got.Status)
	require.NotEmpty(t, timersNamed(all, attemptTimerPrefix+"ses_r"),
		"the restored attempt should be watched for inactivity (attemptTimeoutMs)")
}

// The plugin reloaded while a task was leaving A (a retry status made us abort A): the history
// says A failed with a rate limit, and the session's last message is our abort's echo. B gets
// the task (it used to fail with "The operation was aborted.").
func TestRestoredSwitchAfterOurAbortGoesToTheNextModel(t *testing.T) {
	h := newFB(t, chainAB)
	tk := restoredOnA(task.StatusRunning, []task.FallbackAttempt{{Model: "mock/mock-a", Timestamp: 900_000, Error: "Rate limit exceeded", Class: "rate_limit"}})
	all := h.restoreAndReconcile(tk, `{}`,
		`[{"info":{"id":"m1","role":"user","time":{"created":900001}},"parts":[]},`+
			`{"info":{"id":"m2","role":"assistant","error":{"name":"MessageAbortedError","data":{"message":"The operation was aborted."}},"time":{"created":900002,"completed":960000}},"parts":[]}]`)
	got, _ := h.m.Task("ses_r")
	require.Equal(t, task.StatusRunning, got.Status, "task ended: %v %+v", got.Status, got.Error)
	require.Len(t, prompts(all, "ses_r"), 1)
}

// The plugin reloaded between A's rate-limit error and the switch: B gets the task at once, and
// A's failure, on record before the reload, is not counted again (it was, and the circuit
// opened one failure early; B waited for the next poll).
func TestRestoredSwitchAfterAProviderErrorCountsItOnce(t *testing.T) {
	h := newFB(t, chainAB)
	tk := restoredOnA(task.StatusRunning, []task.FallbackAttempt{{Model: "mock/mock-a", Timestamp: 900_000, Error: "Rate limit reached for requests", Class: "rate_limit"}})
	// The health file as written before the reload: A's one failure.
	h.m.RestoreHealth(`{"version":1,"models":{"mock/mock-a":{"failures":1,"lastError":"Rate limit reached for requests","lastFailureAt":900003}}}`)
	all := h.restoreAndReconcile(tk, `{}`,
		`[{"info":{"id":"m1","role":"user","time":{"created":900001}},"parts":[]},`+
			`{"info":{"id":"m2","role":"assistant","error":`+rateLimited+`,"time":{"created":900002,"completed":900003}},"parts":[]}]`)
	p := prompts(all, "ses_r")
	require.Len(t, p, 1, "B gets the task at the reconcile")
	require.Equal(t, "mock/mock-b", p[0].Model)
	var state string
	for _, e := range ofKind(h.effects, EffectStateWrite) {
		state = e.Content
	}
	require.NotContains(t, state, `"failures": 2`, "A's one failure, already recorded before the restart, was counted again")
}

// A restored task still at work (running or resumed) completes from events, and from the poll.
func TestRestoredTaskCompletesFromEventsAndPoll(t *testing.T) {
	for _, status := range []task.Status{task.StatusRunning, task.StatusResumed} {
		h := newFB(t, chainAB)
		tk := restoredOnA(status, []task.FallbackAttempt{{Model: "mock/mock-a", Timestamp: 900_000}})
		if status == task.StatusResumed {
			tk.ResumeCount, tk.ResumedAt = 1, 950_000
		}
		h.restoreAndReconcile(tk, `{"ses_r":{"type":"busy"}}`, `[{"info":{"id":"m1","role":"user","time":{"created":900001}},"parts":[]}]`)
		h.answer("ses_r", "", "done after restore")
		got, _ := h.m.Task("ses_r")
		require.Equal(t, task.StatusCompleted, got.Status, string(status))

		h = newFB(t, chainAB)
		h.restoreAndReconcile(tk, `{"ses_r":{"type":"busy"}}`, `[{"info":{"id":"m1","role":"user","time":{"created":900001}},"parts":[]}]`)
		eff := h.step(Event{Type: EventTimer, TimerID: pollTimer})
		st := ofKind(eff, EffectStatus)
		require.Len(t, st, 1)
		eff = h.step(Event{Type: EventEffectDone, EffectID: st[0].ID, OK: true, Result: json.RawMessage(`{}`)})
		rd := ofKind(eff, EffectMessages)
		require.Len(t, rd, 1, "the poll reads a restored task")
		h.step(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true, Result: json.RawMessage(fmt.Sprintf(
			`[{"info":{"id":"m2","role":"assistant","finish":"stop","time":{"created":%d,"completed":%d}},"parts":[{"type":"text","text":"polled"}]}]`, h.now, h.now))})
		got, _ = h.m.Task("ses_r")
		require.Equal(t, task.StatusCompleted, got.Status, string(status))
		require.Equal(t, "polled", got.Result)
	}
}

// A restored queued task starts.
func TestRestoredQueuedTaskStarts(t *testing.T) {
	h := newFB(t, chainAB)
	tk := restoredOnA(task.StatusRunning, []task.FallbackAttempt{})
	tk.Queued = true
	_, eff := h.m.Restore(h.now, HistoryLine(tk))
	p := prompts(eff, "ses_r")
	require.Len(t, p, 1)
	h.step(Event{Type: EventEffectDone, EffectID: p[0].ID, OK: true})
	h.answer("ses_r", "", "ok")
	got, _ := h.m.Task("ses_r")
	require.Equal(t, task.StatusCompleted, got.Status)
}

// "Compact once, then fall back" holds across a reload: an attempt already compacted moves to B
// on its next overflow (it used to be compacted again).
func TestRestoredCompactedAttemptIsNotCompactedAgain(t *testing.T) {
	// Live: A overflows, the session is compacted, A overflows again -> B.
	h := newFB(t, chainAB)
	id := h.launch()
	h.busy(id)
	eff := h.answer(id, tooLong, "")
	require.Len(t, ofKind(eff, EffectSummarize), 1)
	sum := ofKind(eff, EffectSummarize)[0]
	h.step(Event{Type: EventEffectDone, EffectID: sum.ID, OK: true})
	liveShared, _ := h.m.Task(id)
	var live task.Task // Task() shares FallbackInfo with the machine: snapshot it now
	b, _ := json.Marshal(liveShared)
	require.NoError(t, json.Unmarshal(b, &live))
	h.busy(id)
	eff = h.answer(id, tooLong, "")
	require.Empty(t, ofKind(eff, EffectSummarize))
	require.Equal(t, "mock/mock-b", prompts(eff, id)[0].Model, "live: B after the second overflow")

	// The same task restored from its history after the compaction (the reload in between).
	r := newFB(t, chainAB)
	live.ID, live.SessionID = "bg_r", "ses_r"
	r.restoreAndReconcile(live, `{"ses_r":{"type":"busy"}}`, `[{"info":{"id":"m1","role":"user","time":{"created":900001}},"parts":[]}]`)
	r.busy("ses_r")
	eff = r.answer("ses_r", tooLong, "")
	require.Empty(t, ofKind(eff, EffectSummarize), "restored: A is not compacted a second time")
	require.Equal(t, "mock/mock-b", prompts(eff, "ses_r")[0].Model)
}

// A status read that fails at the reconcile is asked again a second later, and a child OpenCode
// then lists as busy goes on running. Read as "no child busy" at once, the failure ended the task
// as interrupted while its child was still at work.
func TestReconcileAsksAgainWhenTheStatusReadFails(t *testing.T) {
	h := newFB(t, chainAB)
	tk := restoredOnA(task.StatusRunning, []task.FallbackAttempt{{Model: "mock/mock-a", Timestamp: 900_000}})
	_, eff := h.m.Restore(h.now, HistoryLine(tk))
	st := ofKind(eff, EffectStatus)
	require.Len(t, st, 1)

	eff = h.step(Event{Type: EventEffectDone, EffectID: st[0].ID, OK: false, Error: "connection refused"})
	require.Empty(t, ofKind(eff, EffectMessages), "nothing is read of a child before OpenCode says whether it is busy")
	retry := timersNamed(eff, reconcileTimer)
	require.Len(t, retry, 1)
	require.Equal(t, int64(reconcileRetryMs), retry[0].DelayMs)
	got, _ := h.m.Task("ses_r")
	require.Equal(t, task.StatusRunning, got.Status)

	eff = h.step(Event{Type: EventTimer, TimerID: reconcileTimer})
	st = ofKind(eff, EffectStatus)
	require.Len(t, st, 1, "the timer asks for the statuses again")
	eff = h.step(Event{Type: EventEffectDone, EffectID: st[0].ID, OK: true, Result: json.RawMessage(`{"ses_r":{"type":"busy"}}`)})
	rd := ofKind(eff, EffectMessages)
	require.Len(t, rd, 1)
	h.step(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true,
		Result: json.RawMessage(`[{"info":{"id":"m1","role":"user","time":{"created":900001}},"parts":[]}]`)})
	got, _ = h.m.Task("ses_r")
	require.Equal(t, task.StatusRunning, got.Status, "a busy child goes on: %+v", got.Error)
}

// When every try fails (the first read and reconcileRetries more), the reconcile goes on as
// before the retries: the children are read as not busy, and one whose answer is not complete
// ends as interrupted. The reads are bounded: no timer follows the last failure.
func TestReconcileGivesUpAfterItsRetries(t *testing.T) {
	h := newFB(t, chainAB)
	tk := restoredOnA(task.StatusRunning, []task.FallbackAttempt{{Model: "mock/mock-a", Timestamp: 900_000}})
	_, eff := h.m.Restore(h.now, HistoryLine(tk))
	reads := 0
	for range reconcileRetries + 5 {
		st := ofKind(eff, EffectStatus)
		if len(st) == 0 {
			break
		}
		require.Len(t, st, 1)
		reads++
		eff = h.step(Event{Type: EventEffectDone, EffectID: st[0].ID, OK: true, Result: json.RawMessage(`"not a map"`)})
		if len(ofKind(eff, EffectMessages)) > 0 {
			break
		}
		require.Len(t, timersNamed(eff, reconcileTimer), 1, "read %d", reads)
		eff = h.step(Event{Type: EventTimer, TimerID: reconcileTimer})
	}
	require.Equal(t, reconcileRetries+1, reads)
	require.Empty(t, timersNamed(eff, reconcileTimer))
	rd := ofKind(eff, EffectMessages)
	require.Len(t, rd, 1)
	h.step(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true,
		Result: json.RawMessage(`[{"info":{"id":"m1","role":"user","time":{"created":900001}},"parts":[]}]`)})
	got, _ := h.m.Task("ses_r")
	require.Equal(t, task.StatusError, got.Status)
	require.Contains(t, got.Error.Message, "interrupted")
}

// A copy of a task (Machine.Task) does not share its fallback record with the live task: the
// loop changes attempts in place, and a copy taken before must keep what it saw.
func TestATaskCopyKeepsItsOwnFallbackRecord(t *testing.T) {
	h := newFB(t, chainAB)
	tk := restoredOnA(task.StatusRunning, []task.FallbackAttempt{{Model: "mock/mock-a", Timestamp: 900_000}})
	tk.FallbackInfo.Skipped = []string{"mock/mock-c"}
	h.m.Restore(h.now, HistoryLine(tk))
	seen, ok := h.m.Task("ses_r")
	require.True(t, ok)
	seen.FallbackInfo.Attempts[0].Error = "changed by the caller"
	seen.FallbackInfo.Skipped[0] = "changed by the caller"
	seen.FallbackInfo.TotalAttempts = 7
	live, _ := h.m.Task("ses_r")
	require.Equal(t, tk.FallbackInfo, live.FallbackInfo)
}
