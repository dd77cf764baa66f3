package core

import (
	"fmt"
	"strings"

	"github.com/asyncagents/asyncagents/core/httpapi"
	"github.com/asyncagents/asyncagents/core/text"
)

// Storage faults: a history write that fails (a full disk, a read-only data folder) loses nothing
// said and says so. The host writes the history's effects in order and keeps the first error among
// them; history.sync asks for it (the reply fails with that error, and the host forgets it).
//
//   - A step that writes lines and has notices ready ends with a sync, and the notices wait for
//     its answer: a notice goes only after the end it tells of is on disk, or (the sync failed)
//     with a visible warning that it is not.
//   - The first failure puts the machine in fault: the status API's health reads "degraded" with
//     the error, a toast and an error log line tell the user once, and every notice carries the
//     warning until the fault is over. Nothing is appended meanwhile: the tasks are held in memory.
//   - A timer tries again, storageRetryMs apart at first, doubling to storageRetryMaxMs: it rewrites
//     the whole log (the compaction, which a failed append's torn line cannot survive) and syncs.
//     When that sync succeeds, the fault is over and everything held is on disk.
//
// A sync costs one more step, so only a step that tells a parent something asks for one: a write
// that fails elsewhere is found by the next sync, and every task is rewritten then anyway.

// EffectHistorySync asks whether every history effect since the last sync was written: the host
// replies ok, or fails with the first error among them.
const EffectHistorySync = "history.sync"

const (
	storageRetryTimer = "history.retry"
	storageRetryMs    = 2_000
	storageRetryMaxMs = 60_000
)

// storageState is the machine's view of its history file's health.
type storageState struct {
	fault      string // the error of the write that failed, "" while writes succeed
	faultSince int64
	retryMs    int64 // the retry timer's next delay
	syncing    int   // syncs asked for and not answered yet: the outbox waits for them
	sync       bool  // the host answers history.sync (Setup.HistorySync)
	// behind: the OpenCode work of steps whose notices wait for a sync (holdBehindNotices)
	behind []Effect
}

// StorageFault is the error that keeps the history from being written, "" when there is none.
func (m *Machine) StorageFault() string { return m.store.fault }

// wantsSync reports whether this step's writes must be confirmed before its notices go.
func (m *Machine) wantsSync() bool {
	return m.store.sync && m.store.fault == "" && len(m.dirty) > 0 && m.outbox.AnyReady()
}

// requestSync asks the host whether the writes so far are on disk.
func (m *Machine) requestSync(retry bool) {
	m.store.syncing++
	m.request(Effect{Kind: EffectHistorySync}, pending{storageRetry: retry})
}

// onHistorySynced takes the host's answer to a sync.
func (m *Machine) onHistorySynced(p pending, ev Event) {
	m.store.syncing = max(m.store.syncing-1, 0)
	switch {
	case !ev.OK:
		m.storageFailed(ev.Error)
	case p.storageRetry && m.store.fault != "":
		m.log("info", fmt.Sprintf(storageRecoveredFmt, text.Duration(m.now-m.store.faultSince)))
		m.store = storageState{syncing: m.store.syncing, sync: true, behind: m.store.behind}
		m.toast(ToastSuccess, storageToastTitle, storageRecoveredToast)
		m.healthChanged()
	}
	if m.store.syncing == 0 {
		for _, parent := range m.outbox.Parents() {
			m.markReady(parent)
		}
		// The notices go first at the end of this step (persistDirty), then the work held.
		m.out = append(m.out, m.store.behind...)
		m.store.behind = nil
	}
}

// holdBehindNotices takes out of the step's effects the work for OpenCode (a queued child's
// session and prompt, when a child's end freed its slot) while the step's notices wait for a
// sync: OpenCode starts on requests in the order they come, and a notice sent after a child's
// start waits for it (persistDirty). The work goes once the sync is answered, after the notices.
// The tools' answers, timers and the rest are not held: only requests that OpenCode queues.
func (m *Machine) holdBehindNotices() {
	kept := m.out[:0]
	for _, e := range m.out {
		if (e.Kind == EffectSessionCreate || e.Kind == EffectPromptAsync) && !e.Notice {
			m.store.behind = append(m.store.behind, e)
			continue
		}
		kept = append(kept, e)
	}
	m.out = kept
}

// storageFailed enters (or stays in) the fault: told once, retried on a timer.
func (m *Machine) storageFailed(why string) {
	if why == "" {
		why = "unknown error"
	}
	if m.store.fault == "" {
		m.store.faultSince = m.now
		m.store.retryMs = storageRetryMs
		m.log("error", fmt.Sprintf(storageFaultLogFmt, why))
		m.toast(ToastError, storageToastTitle, fmt.Sprintf(storageFaultToastFmt, why))
		m.healthChanged()
	} else {
		m.store.retryMs = min(m.store.retryMs*2, storageRetryMaxMs)
	}
	m.store.fault = why
	m.pendingIndex = nil // an index of a log that may not be on disk would mislead
	m.emit(Effect{Kind: EffectTimerSet, TimerID: storageRetryTimer, DelayMs: m.store.retryMs})
}

// healthChanged tells the event streams' clients (the dashboard) to read the API again: its
// health says whether the history can be written.
func (m *Machine) healthChanged() {
	if m.streamsListen() {
		m.out = append(m.out, Effect{Kind: EffectSSEBroadcast, Frame: httpapi.ResyncFrame(0)})
	}
}

// retryStorage rewrites the whole log from memory and asks whether that worked.
func (m *Machine) retryStorage() {
	if m.store.fault == "" {
		return
	}
	m.compact()
	m.requestSync(true)
}

// storageWarning is the visible part a notice carries while the history cannot be written.
func (m *Machine) storageWarning() (TextPart, bool) {
	if m.store.fault == "" {
		return TextPart{}, false
	}
	return TextPart{Type: "text", Text: fmt.Sprintf(storageNoticeWarningFmt, m.store.fault)}, true
}

// storageHealth is the reason /v1/health gives for "degraded", "" when there is none.
func (m *Machine) storageHealth() string {
	if m.store.fault == "" {
		return ""
	}
	return fmt.Sprintf(storageHealthFmt, strings.TrimSpace(m.store.fault))
}
