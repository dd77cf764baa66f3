package core

import (
	"fmt"
	"math"
	"strings"
)

// outputArgs are asyncagents_output's arguments. Timeout is in seconds.
type outputArgs struct {
	TaskID  string   `json:"task_id"`
	Block   bool     `json:"block"`
	Timeout *float64 `json:"timeout"`
	Offset  *float64 `json:"offset"`
	Limit   *float64 `json:"limit"`
}

const waitTimerPrefix = "wait:"

func waitTimer(callID string) string { return waitTimerPrefix + callID }

func (m *Machine) onOutputCall(ev Event) {
	var a outputArgs
	if err := parseArgs(ev.Args, &a); err != nil {
		m.failTool(ev.CallID, "asyncagents_output: "+err.Error())
		return
	}
	a.TaskID = strings.TrimSpace(a.TaskID)
	if a.TaskID == "" {
		m.failTool(ev.CallID, outputNoTaskID)
		return
	}
	timeoutMs := m.cfg.DefaultBlockTimeoutMs
	if a.Timeout != nil {
		s := *a.Timeout
		maxS := float64(m.cfg.MaxBlockTimeoutMs) / 1000
		if math.IsNaN(s) || s <= 0 || s > maxS {
			m.failTool(ev.CallID, fmt.Sprintf(outputBadTimeoutFmt, maxS, s))
			return
		}
		timeoutMs = int64(s * 1000)
	}
	pg, err := parsePage(a.Offset, a.Limit)
	if err != nil {
		m.failTool(ev.CallID, err.Error())
		return
	}
	t := m.task(a.TaskID)
	if t == nil && m.foreign(a.TaskID) != nil {
		m.failTool(ev.CallID, fmt.Sprintf(foreignTaskFmt, quote(a.TaskID)))
		return
	}
	if t == nil {
		m.failTool(ev.CallID, fmt.Sprintf(outputNoTaskFmt, quote(a.TaskID)))
		return
	}
	if t.Status.Terminal() || !a.Block {
		m.replyOutput(ev.CallID, t, pg)
		return
	}
	m.waiters[ev.CallID] = &waiter{callID: ev.CallID, taskID: t.ID, page: pg}
	m.emit(Effect{Kind: EffectTimerSet, TimerID: waitTimer(ev.CallID), DelayMs: timeoutMs})
}

// replyOutput answers an output call with the task as it stands, marking a result as retrieved.
func (m *Machine) replyOutput(callID string, t *run, pg page) {
	text, err := m.outputText(t, pg)
	if err != nil {
		m.failTool(callID, err.Error())
		return
	}
	if t.Status.Terminal() {
		t.RetrievedAt = m.now
		m.touch(t)
	}
	m.replyTool(callID, text, t.metadata(t.Description, "status", string(t.Shown())))
}

// releaseWaiters answers every blocked output call on a task that just finished.
func (m *Machine) releaseWaiters(t *run) {
	for _, callID := range m.waiterCalls(t.ID) {
		page := m.waiters[callID].page
		delete(m.waiters, callID)
		m.emit(Effect{Kind: EffectTimerClear, TimerID: waitTimer(callID)})
		m.replyOutput(callID, t, page)
	}
}

// waiterCalls lists the blocked calls on a task, sorted for deterministic effect order.
func (m *Machine) waiterCalls(taskID string) []string {
	var ids []string
	for id, w := range m.waiters {
		if w.taskID == taskID {
			ids = append(ids, id)
		}
	}
	sortStrings(ids)
	return ids
}

func (m *Machine) onWaitTimeout(callID string) {
	w, ok := m.waiters[callID]
	if !ok {
		return
	}
	delete(m.waiters, callID)
	if t := m.task(w.taskID); t != nil {
		m.replyOutput(callID, t, w.page)
	}
}
