package core

import (
	"fmt"

	"github.com/asyncagents/asyncagents/core/errclass"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/core/text"
)

// Model fallback chains. A task whose agent has a chain (asyncagents.json agents.<name>.models,
// or .model, else the model of the parent's own message) runs each attempt on one model. When
// the attempt fails with a provider error (rate limit, overload, outage, quota, auth, network,
// or no activity for fallback.attemptTimeoutMs) the next model of the chain gets the same prompt
// in the same session, so the task keeps its ID. A context-length error first compacts the
// session and retries once on the same model. Any other error fails the task at once: a bad
// request fails on every model alike.
//
// OpenCode answers promptAsync with 204 even when the model call will fail; failures arrive as
// the assistant message's error (message.updated), as session.error, or as a session.status of
// type "retry" while OpenCode retries a provider error on its own (up to about 70 s). A retry
// status on a task that has another model to go to ends the attempt at once: the session is
// aborted and the next model prompted, instead of waiting out OpenCode's retries.
//
// Every decision is recorded in the task's fallbackInfo, which the API, asyncagents_output and
// the notice show.

// attemptTimerPrefix names the timer that watches an attempt for inactivity.
const attemptTimerPrefix = "attempt:"

// resolveChain is the model chain for a task of agent launched from parentSession: the agent's
// configured models, else its one model, else the agent's own model in OpenCode's config (the
// worker's, for a task placed there), else
// the model of the parent's message. The concurrency limits queue a task by its chain's model. Empty means
// OpenCode chooses and there is nothing to fall back to.
func (m *Machine) resolveChain(worker, agent, parentSession string) []string {
	chain := m.fullChain(worker, agent, parentSession)
	if len(chain) > 1 && !m.cfg.Fallback.FallbackOn() {
		return chain[:1] // fallback.enabled false: the first model only
	}
	return chain
}

func (m *Machine) fullChain(worker, agent, parentSession string) []string {
	if a, ok := m.cfg.Agents[agent]; ok {
		if len(a.Models) > 0 {
			return append([]string(nil), a.Models...)
		}
		if a.Model != "" {
			return []string{a.Model}
		}
	}
	if a, ok := m.agentAt(worker, agent); ok && a.Model != nil && a.Model.ProviderID != "" && a.Model.ModelID != "" {
		return []string{a.Model.ProviderID + "/" + a.Model.ModelID}
	}
	if model := m.sessionModel.get(parentSession); model != "" {
		return []string{model}
	}
	return nil
}

// firstModel picks the model a task starts on: the chain's first whose circuit is closed. When
// every circuit is open, the whole chain is tried anyway: a task is never refused for want of a
// healthy model.
func (m *Machine) firstModel(t *run) {
	if len(t.Models) == 0 {
		return
	}
	info := &task.FallbackInfo{Attempts: []task.FallbackAttempt{}}
	t.FallbackInfo = info
	for i, model := range t.Models {
		if !m.circuitOpen(model) {
			t.Model, t.modelIndex = model, i
			info.Skipped = append([]string(nil), t.Models[:i]...)
			info.Occurred = i > 0
			return
		}
	}
	t.Model, t.modelIndex = t.Models[0], 0
}

// beginAttempt records a new attempt on t.Model and arms its inactivity timer.
func (m *Machine) beginAttempt(t *run, compacted bool) {
	if t.Model == "" || t.FallbackInfo == nil {
		return
	}
	t.exhausted = false
	t.FallbackInfo.Attempts = append(t.FallbackInfo.Attempts, task.FallbackAttempt{Model: t.Model, Timestamp: m.now, Compacted: compacted})
	t.FallbackInfo.TotalAttempts = len(t.FallbackInfo.Attempts)
	m.touch(t)
	m.armAttemptTimer(t, m.cfg.Fallback.AttemptTimeoutMs)
}

func (m *Machine) armAttemptTimer(t *run, delay int64) {
	m.emit(Effect{Kind: EffectTimerSet, TimerID: attemptTimerPrefix + t.ID, DelayMs: delay})
}

// endAttempt closes the current attempt's record.
func (m *Machine) endAttempt(t *run, ok bool, e *task.TaskError, class errclass.ErrorClass) {
	info := t.FallbackInfo
	if info == nil || len(info.Attempts) == 0 {
		return
	}
	a := &info.Attempts[len(info.Attempts)-1]
	a.Success, a.EndedAt = ok, m.now
	if e != nil {
		a.Error = e.Message
		a.Class = string(class)
	}
	if !ok {
		a.Partial = t.attemptPartial(a.Timestamp)
	}
	if ok {
		info.SuccessfulModel = a.Model
	}
	m.emit(Effect{Kind: EffectTimerClear, TimerID: attemptTimerPrefix + t.ID})
	m.touch(t)
}

// attemptSucceeded is called when a task completes: its model is healthy again.
func (m *Machine) attemptSucceeded(t *run) {
	if t.FallbackInfo == nil {
		return
	}
	m.endAttempt(t, true, nil, "")
	m.recordHealth(t.Model, true, "")
}

// childFailed decides what a failed model call means for t. It returns true when the failure is
// handled (another attempt is under way, or the error is the echo of our own abort) and the task
// must not fail.
//
// settled says whether the failed message is known to be complete.
func (m *Machine) childFailed(t *run, e *task.TaskError, settled bool) bool {
	if t.switching {
		return true // the abort we sent to leave a failing model
	}
	if !m.canFallBack(t) || e == nil {
		return false
	}
	class := errclass.ClassifyError(e.Provider())
	switch {
	case class.CompactFirst() && !t.compacted:
		// OpenCode compacts the session and then continues it on its own ("Continue if you
		// have next steps"), on the same model: that continuation is the retry. The compaction
		// is asked for once the failed turn has settled, like a switch of model.
		m.endAttempt(t, false, e, class)
		t.compacted = true
		m.leaveAttempt(t)
		t.pendingErr, t.pendingClass, t.pendingCompact = e, class, true
		t.abortDone, t.settled, t.idleSeen = true, settled, settled
		if settled {
			m.switchModel(t)
		}
		return true
	case class.Fallback() || class.CompactFirst():
		m.endAttempt(t, false, e, class)
		if class.Fallback() {
			m.recordHealth(t.Model, false, e.Message)
		}
		if !m.hasNextModel(t) {
			m.exhaust(t)
			return false
		}
		// The next model is prompted once the failed turn has settled (see Task.settled).
		m.leaveAttempt(t)
		t.pendingErr, t.pendingClass = e, class
		t.abortDone, t.settled, t.idleSeen = true, settled, settled
		if settled {
			m.switchModel(t) // this very idle followed the failed message's completion
		}
		return true
	}
	m.endAttempt(t, false, e, class)
	return false
}

// nextModel moves t to the next model of its chain whose circuit is closed and prompts it.
// It returns false when the chain is exhausted.
func (m *Machine) nextModel(t *run, e *task.TaskError, class errclass.ErrorClass) bool {
	t.placeInChain()
	for i := t.modelIndex + 1; i < len(t.Models); i++ {
		model := t.Models[i]
		if m.circuitOpen(model) {
			t.FallbackInfo.Skipped = append(t.FallbackInfo.Skipped, model)
			continue
		}
		m.log("info", fmt.Sprintf("task %s: %s failed (%s: %s); falling back to %s", t.ID, t.Model, class, firstLine(e.Message), model))
		t.Model, t.modelIndex, t.compacted = model, i, false
		t.FallbackInfo.Occurred = true
		if !m.waitForSlot(t) { // else prompted on the new model when a slot on it frees
			m.reprompt(t, false)
		}
		m.startQueued() // the old model's slot is free
		return true
	}
	return false
}

// leaveAttempt puts t between attempts: what the left attempt still reports (its error again,
// its idle, the compaction's own turns) is not the task's outcome. The next reprompt ends it.
func (m *Machine) leaveAttempt(t *run) {
	t.switching = true
	t.attemptAt = m.now
	t.msg, t.sessionError = nil, nil
}

// reprompt sends the task's prompt again, on t.Model, as a new attempt. Answers older than the
// attempt are ignored from now on (attemptAt), so the failed answer cannot end the task.
func (m *Machine) reprompt(t *run, compacted bool) {
	t.msg, t.sessionError, t.promptSent, t.toolsRunning, t.promptResends = nil, nil, false, nil, 0
	t.attemptAt, t.awaitBusy, t.switching = m.now, true, false
	m.beginAttempt(t, compacted)
	m.sendPrompt(t)
}

// noteCompaction records that the child's session was compacted during the current attempt,
// whether we asked (a context-length error) or OpenCode did it on its own (it compacts a session
// that overflows, and on the context errors it recognises, then continues it).
func (m *Machine) noteCompaction(t *run) {
	info := t.FallbackInfo
	if info == nil || len(info.Attempts) == 0 || info.Attempts[len(info.Attempts)-1].Compacted {
		return
	}
	info.Attempts[len(info.Attempts)-1].Compacted = true
	m.touch(t)
}

// onCompacted: OpenCode continues the compacted session by itself, so a successful compaction
// needs nothing more. If it could not compact, the next model gets the task.
func (m *Machine) onCompacted(p pending, ev Event) {
	t := m.task(p.taskID)
	if t == nil || t.Status.Terminal() || !t.compacting {
		return
	}
	t.switching, t.compacting = false, false
	if ev.OK {
		// The continuation may already have answered while the compaction was awaited.
		m.checkTask(t, false)
		return
	}
	e := &task.TaskError{Name: "CompactError", Message: compactErrorPrefix + ev.Error}
	m.log("warn", "task "+t.ID+": "+e.Message)
	m.endAttempt(t, false, e, errclass.ErrContextLength)
	if !m.nextModel(t, e, errclass.ErrContextLength) {
		m.exhaust(t)
		m.finish(t, task.StatusError, "", e)
	}
}

// onChildRetry handles a session.status of type retry: OpenCode is retrying a provider error on
// its own. With another model to go to, the attempt ends now.
func (m *Machine) onChildRetry(t *run, message string) {
	if t.switching || !m.canFallBack(t) || t.Status.Terminal() {
		return
	}
	e := &task.TaskError{Name: "APIError", Message: message}
	class := errclass.ClassifyError(e.Provider())
	if !class.Fallback() {
		class = errclass.ErrServer // OpenCode retries provider errors only
	}
	if !m.hasNextModel(t) {
		return // nothing better to do than let OpenCode retry
	}
	m.abandonAttempt(t, e, class)
}

// abandonAttempt ends a running attempt on our side: the session is aborted, and once OpenCode
// confirms, the next model is prompted.
func (m *Machine) abandonAttempt(t *run, e *task.TaskError, class errclass.ErrorClass) {
	m.endAttempt(t, false, e, class)
	m.recordHealth(t.Model, false, e.Message)
	m.leaveAttempt(t)
	t.pendingErr, t.pendingClass = e, class
	t.abortDone, t.settled, t.idleSeen = false, false, false
	m.request(Effect{Kind: EffectAbort, SessionID: t.SessionID, TaskID: t.ID}, pending{taskID: t.ID, switchModel: true})
}

// onAbortedForSwitch notes that OpenCode confirmed the abort of a failing attempt. The next model
// is prompted once the session is also idle: OpenCode 1.18 drops a prompt that reaches a session
// still winding down its aborted turn.
func (m *Machine) onAbortedForSwitch(p pending, ev Event) {
	t := m.task(p.taskID)
	if t == nil || t.Status.Terminal() || t.pendingErr == nil {
		return
	}
	if !ev.OK {
		m.log("warn", "task "+t.ID+": could not abort the failing attempt: "+ev.Error)
	}
	t.abortDone = true
	if t.idleSeen {
		m.switchModel(t)
	}
}

// onIdleWhileSwitching notes an idle between attempts: once the failed turn has settled, the
// idle that follows is the end of it.
func (m *Machine) onIdleWhileSwitching(t *run) {
	if t.pendingErr == nil {
		return // a compaction, not a switch
	}
	if t.settled {
		t.idleSeen = true
	}
	if t.abortDone && t.idleSeen {
		m.switchModel(t)
	}
}

// onSettled notes that the failed turn's message is complete.
func (m *Machine) onSettled(t *run) {
	if t.pendingErr != nil {
		t.settled = true
	}
}

// onQuietWhileSwitching: the poll found the session not busy between attempts, a while after the
// failure. Whatever events were missed, the turn is over.
func (m *Machine) onQuietWhileSwitching(t *run) {
	if t.pendingErr != nil && t.abortDone {
		m.switchModel(t)
	}
}

// switchModel starts what waited for the failed turn to settle: the compaction, or the next
// model; with no model left the task fails.
func (m *Machine) switchModel(t *run) {
	e, class := t.pendingErr, t.pendingClass
	t.pendingErr, t.abortDone, t.settled, t.idleSeen = nil, false, false, false
	if t.pendingCompact {
		// Until OpenCode has compacted, what the session reports (the compaction's own turn)
		// is not the task's outcome: switching stays on until summarize answers.
		t.pendingCompact, t.compacting = false, true
		m.beginAttempt(t, true)
		m.log("info", fmt.Sprintf("task %s: %s hit its context limit; compacting the session and retrying once", t.ID, t.Model))
		m.request(Effect{Kind: EffectSummarize, SessionID: t.SessionID, TaskID: t.ID}.withModel(t.Model), pending{taskID: t.ID, compact: true})
		return
	}
	t.switching = false
	if !m.nextModel(t, e, class) {
		m.exhaust(t)
		m.finish(t, task.StatusError, "", e)
	}
}

// skipOpenCircuit moves a resume off the model that answered last when that model's circuit has
// opened since, to the next model of the chain whose circuit is closed, as a launch would skip
// it. With none closed after it, the model stays: a resume is never refused for want of a healthy
// model.
func (m *Machine) skipOpenCircuit(t *run) {
	if t.FallbackInfo == nil || !m.circuitOpen(t.Model) {
		return
	}
	t.placeInChain()
	for i := t.modelIndex + 1; i < len(t.Models); i++ {
		if !m.circuitOpen(t.Models[i]) {
			t.FallbackInfo.Skipped = append(t.FallbackInfo.Skipped, t.Models[t.modelIndex:i]...)
			t.FallbackInfo.Occurred = true
			t.Model, t.modelIndex = t.Models[i], i
			return
		}
	}
}

// placeInChain sets modelIndex from Model when they disagree: the index is not persisted, so a
// task read from the history (after answering on B, say) starts at 0 and would "fall back" to
// the model it is already on. The first place of Model in the chain is taken.
func (t *run) placeInChain() {
	if t.modelIndex < len(t.Models) && t.Models[t.modelIndex] == t.Model {
		return
	}
	for i, model := range t.Models {
		if model == t.Model {
			t.modelIndex = i
			return
		}
	}
}

// canFallBack says whether t's attempts are the fallback loop's: it has a chain, and it is not a
// resume whose follow-up is unknown (one restored from the history, still at work when OpenCode
// stopped): sending the task's first prompt instead would answer the wrong question.
func (m *Machine) canFallBack(t *run) bool {
	return t.FallbackInfo != nil && (t.Status != task.StatusResumed || t.resumePrompt != "")
}

func (m *Machine) hasNextModel(t *run) bool {
	t.placeInChain()
	for i := t.modelIndex + 1; i < len(t.Models); i++ {
		if !m.circuitOpen(t.Models[i]) {
			return true
		}
	}
	return false
}

// onAttemptTimer abandons an attempt that has shown no activity for attemptTimeoutMs.
func (m *Machine) onAttemptTimer(id string) {
	t := m.task(id)
	if t == nil || t.Status.Terminal() || !m.canFallBack(t) || t.Queued || (t.switching && !t.compacting) {
		return
	}
	if t.compacting && m.now-t.attemptAt >= m.cfg.Fallback.AttemptTimeoutMs {
		// A compaction that never answers (OpenCode dropped it): the next model gets the task.
		t.switching, t.compacting = false, false
	}
	last := max(t.Progress.LastUpdate, t.polledBusyAt) // a polled child listed busy is at work (workers_poll.go)
	if n := len(t.FallbackInfo.Attempts); n > 0 {
		last = max(last, t.FallbackInfo.Attempts[n-1].Timestamp)
	}
	idle := m.now - last
	limit := m.cfg.Fallback.AttemptTimeoutMs
	if (len(t.toolsRunning) > 0 || m.childHeld(t)) && !t.compacting {
		m.armAttemptTimer(t, limit) // a tool at work, or its own tasks: the model is not the one silent
		return
	}
	if idle < limit {
		m.armAttemptTimer(t, limit-idle)
		return
	}
	e := &task.TaskError{Name: "AttemptTimeout", Message: fmt.Sprintf(attemptTimeoutFmt, t.Model, text.Duration(idle))}
	if !m.hasNextModel(t) {
		m.endAttempt(t, false, e, errclass.ErrTimeout)
		m.recordHealth(t.Model, false, e.Message)
		t.switching = true
		m.holdForAbort(t)
		m.request(Effect{Kind: EffectAbort, SessionID: t.SessionID, TaskID: t.ID}, pending{taskID: t.ID})
		m.exhaust(t)
		m.finish(t, task.StatusError, "", e)
		return
	}
	m.abandonAttempt(t, e, errclass.ErrTimeout)
}
