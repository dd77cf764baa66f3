package core

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/httpapi"
	"github.com/asyncagents/asyncagents/core/task"
)

// finishTask has the child answer, and returns every effect since.
func finishTask(h *fbHarness, id, text string) []Effect {
	from := len(h.effects)
	h.answer(id, "", text)
	return h.effects[from:]
}

func newSyncFB(t *testing.T) *fbHarness {
	h := newFB(t, config.Config{})
	h.m = NewMachineWith(config.Config{}, Setup{HistorySync: true})
	return h
}

// health is /v1/health's answer.
func health(t *testing.T, m *Machine) httpapi.APIHealth {
	r := m.ServeHTTP(httpapi.Request{Method: http.MethodGet, Path: "/v1/health", Headers: map[string]string{"host": "127.0.0.1:5165"}}, config.APIConfig{Auth: "none"}, 1)
	var h httpapi.APIHealth
	require.NoError(t, json.Unmarshal([]byte(r.Body), &h), r.Body)
	return h
}

// kindAt is where the first effect of kind is in effects (-1: none).
func kindAt(effects []Effect, kind string) int {
	for i, e := range effects {
		if e.Kind == kind {
			return i
		}
	}
	return -1
}

// A task's notice waits for its end to be on disk: the step writes the end, asks whether that
// worked, and only the answer lets the notice go.
func TestNoticeWaitsForItsEndToBeWritten(t *testing.T) {
	h := newSyncFB(t)
	id := h.launch()
	eff := finishTask(h, id, "done")
	end, sync, notice := -1, kindAt(eff, EffectHistorySync), -1
	for i, e := range eff {
		if e.Kind == EffectHistoryAppend && strings.Contains(e.Line, `"status":"completed"`) && end < 0 {
			end = i
		}
		if e.Kind == EffectPromptAsync && e.Notice {
			notice = i
		}
	}
	require.True(t, end >= 0 && sync > end && notice > sync, "end %d, sync %d, notice %d", end, sync, notice)
	require.Len(t, parentNotices(eff)[0].Parts, 2, "no warning: the end is written")
	require.Equal(t, "ok", health(t, h.m).Status)
}

// A failed write: the notice goes once, with a visible warning; the user is told once (a log line,
// a toast, /v1/health); nothing more is appended while it lasts; a timer retries by rewriting the
// whole log, backing off, and once that works the health is ok again and appends resume.
func TestFullDiskHoldsTasksInMemoryAndSaysSo(t *testing.T) {
	h := newSyncFB(t)
	first := h.launch()
	second := h.launch()
	h.idleParent()
	h.syncErr = "ENOSPC: no space left on device, write"
	eff := finishTask(h, first, "done")
	notices := parentNotices(eff)
	require.Len(t, notices, 1)
	require.Len(t, notices[0].Parts, 3)
	require.Contains(t, notices[0].Parts[2].Text, "could not write its task history (ENOSPC")
	require.False(t, notices[0].Parts[2].Synthetic, "the user sees it")
	toasts := ofKind(eff, EffectToast)
	require.Len(t, toasts, 1)
	require.Equal(t, ToastError, toasts[0].Variant)
	hl := health(t, h.m)
	require.Equal(t, "degraded", hl.Status)
	require.Contains(t, hl.Reason, "ENOSPC")
	retry := ofKind(eff, EffectTimerSet)
	require.Equal(t, storageRetryTimer, retry[len(retry)-1].TimerID)
	require.EqualValues(t, storageRetryMs, retry[len(retry)-1].DelayMs)

	eff = finishTask(h, second, "done too")
	require.Empty(t, ofKind(eff, EffectHistoryAppend), "held in memory")
	for _, toast := range ofKind(eff, EffectToast) {
		require.NotEqual(t, storageToastTitle, toast.Title, "told once")
	}
	require.Len(t, parentNotices(eff), 1)
	require.Contains(t, parentNotices(eff)[0].Parts[2].Text, "held in memory")

	// Still full: the retry's rewrite fails, and the next waits twice as long.
	eff = h.step(Event{Type: EventTimer, TimerID: storageRetryTimer})
	rewrite := ofKind(eff, EffectHistoryRewrite)
	require.Len(t, rewrite, 1)
	require.Contains(t, rewrite[0].Content, first)
	require.Contains(t, rewrite[0].Content, second)
	require.EqualValues(t, 2*storageRetryMs, ofKind(eff, EffectTimerSet)[0].DelayMs)

	// Space again: the rewrite holds every task whole, and the fault is over.
	h.syncErr = ""
	eff = h.step(Event{Type: EventTimer, TimerID: storageRetryTimer})
	var restored []task.Task
	m := NewMachine(config.Config{API: config.APIConfig{ReadOnly: true}})
	m.Restore(h.now, ofKind(eff, EffectHistoryRewrite)[0].Content)
	restored = m.Tasks()
	require.Len(t, restored, 2)
	for _, tk := range restored {
		require.Equal(t, task.StatusCompleted, tk.Status)
		require.Zero(t, tk.NoticeOwed, "the notices' acceptance is written too")
	}
	require.Equal(t, "ok", health(t, h.m).Status)
	require.Equal(t, storageToastTitle, ofKind(eff, EffectToast)[0].Title)
	require.Equal(t, ToastSuccess, ofKind(eff, EffectToast)[0].Variant)
	third := h.launch()
	require.NotEmpty(t, ofKind(h.effects[len(h.effects)-8:], EffectHistoryAppend), "appends resume")
	require.Len(t, parentNotices(finishTask(h, third, "ok"))[0].Parts, 2, "no warning any more")
}

// A restored task whose end was told but never written (the disk was full, then OpenCode
// restarted) is found ended again by the reconcile: the parent's messages hold its notice, so it
// is recorded as accepted, not sent twice.
func TestReconciledEndToldBeforeIsNotToldTwice(t *testing.T) {
	line := HistoryLine(task.Task{ID: "bg_full", SessionID: "ses_full", ParentSessionID: "ses_p", ParentMessageID: "m_p", ParentAgent: "build",
		BatchID: "m_p", Description: "filler", Prompt: "do", Agent: "general", Status: task.StatusRunning, StartedAt: 1000,
		Progress: task.Progress{LastTools: []string{}}, Depth: 1})
	for _, told := range []bool{true, false} {
		m := NewMachineWith(config.Config{}, Setup{HistorySync: true})
		_, effects := m.Restore(9000, line)
		status := ofKind(effects, EffectStatus)
		require.Len(t, status, 1)
		out := m.Step(9100, Event{Type: EventEffectDone, EffectID: status[0].ID, OK: true, Result: json.RawMessage(`{}`)})
		child := ofKind(out, EffectMessages)[0]
		out = m.Step(9200, Event{Type: EventEffectDone, EffectID: child.ID, OK: true,
			Result: json.RawMessage(`[{"info":{"id":"a","role":"assistant","finish":"stop","time":{"created":1500,"completed":2000}},"parts":[{"type":"text","text":"done"}]}]`)})
		if sync := ofKind(out, EffectHistorySync); len(sync) > 0 {
			out = m.Step(9250, Event{Type: EventEffectDone, EffectID: sync[0].ID, OK: true})
		}
		toldOnce(t, m, out, 9300, "bg_full", told)
	}
}

// toldOnce answers the read of ses_p's messages that a reconciled end of task id waits for,
// with the task's notice in them when told, and checks that the parent is told only when it
// was not.
func toldOnce(t *testing.T, m *Machine, out []Effect, now int64, id string, told bool) {
	t.Helper()
	require.Empty(t, parentNotices(out), "the parent's messages are read first")
	read := ofKind(out, EffectMessages)
	require.Len(t, read, 1)
	require.Equal(t, "ses_p", read[0].SessionID)
	parent := `[]`
	if told {
		parent = `[{"info":{"id":"u","role":"user","time":{"created":2100}},"parts":[{"type":"text","text":"Background task completed.\ntask_id: ` + id + `\n","synthetic":true}]}]`
	}
	out = m.Step(now, Event{Type: EventEffectDone, EffectID: read[0].ID, OK: true, Result: json.RawMessage(parent)})
	tk, _ := m.Task(id)
	if told {
		require.Empty(t, parentNotices(out), "told before the restart: not again")
		require.Zero(t, tk.NoticeOwed)
	} else {
		require.Len(t, parentNotices(out), 1, "never told: told now")
	}
}

// A child's end frees its slot while its notice waits for the history's sync: the next queued
// child's session waits with the notice and goes after it, as without a sync, since OpenCode
// starts on requests in the order they come (a notice behind a child's start waits for it).
func TestANoticeWaitingForASyncStillGoesAheadOfTheNextQueuedStart(t *testing.T) {
	h := newFB(t, config.Config{})
	h.m = NewMachineWith(config.Config{MaxConcurrentStarts: 1}, Setup{HistorySync: true})
	first := h.launchFrom("ses_p", "A")
	queued := h.launchFrom("ses_p", "Q")
	require.True(t, h.m.task(queued).Queued)
	h.idleParent()
	eff := finishTask(h, h.m.task(first).SessionID, "done")
	sync, notice, start := kindAt(eff, EffectHistorySync), -1, -1
	for i, e := range eff {
		if e.Kind == EffectPromptAsync && e.Notice && notice < 0 {
			notice = i
		}
		if e.Kind == EffectSessionCreate && e.TaskID == queued {
			start = i
		}
	}
	require.True(t, sync >= 0 && notice > sync, "the notice waits for the sync: sync %d, notice %d", sync, notice)
	require.Greater(t, start, notice, "the queued child's session is created after the notice is sent")
}
