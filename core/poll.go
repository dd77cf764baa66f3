package core

import (
	"encoding/json"
	"strings"

	"github.com/asyncagents/asyncagents/core/httpapi"
)

// onTimer dispatches a fired timer.
func (m *Machine) onTimer(id string) {
	switch {
	case id == pollTimer:
		m.pollArmed = false
		m.checkLiveness()
		if len(m.running()) == 0 {
			return
		}
		if m.localDirs()[""] {
			m.request(Effect{Kind: EffectStatus}, pending{})
		}
		m.pollWorktrees()
		m.pollWorkers()
	case id == workerProbeTimer:
		if m.probing {
			m.askHealths()
		}
	case id == ProgressTimer:
		m.writeProgress()
	case id == indexTimer:
		m.writeIndex()
	case id == storageRetryTimer:
		m.retryStorage()
	case id == reconcileTimer:
		m.retryReconcile()
	case id == HeartbeatTimer:
		m.expirePending()
		m.restIdleWorkers()
		if m.streamsListen() {
			m.out = append(m.out, Effect{Kind: EffectSSEBroadcast, Frame: httpapi.HeartbeatFrame(m.now)})
		}
		m.out = append(m.out, Effect{Kind: EffectTimerSet, TimerID: HeartbeatTimer, DelayMs: httpapi.SSEHeartbeatIntervalMs})
	case strings.HasPrefix(id, waitTimerPrefix):
		m.onWaitTimeout(strings.TrimPrefix(id, waitTimerPrefix))
	case strings.HasPrefix(id, noticeRetryPrefix):
		m.onNoticeRetry(strings.TrimPrefix(id, noticeRetryPrefix))
	case strings.HasPrefix(id, permissionTimerPrefix):
		m.onPermissionTimeout(strings.TrimPrefix(id, permissionTimerPrefix))
	case strings.HasPrefix(id, deadlineTimerPrefix):
		m.onDeadline(strings.TrimPrefix(id, deadlineTimerPrefix))
	case strings.HasPrefix(id, settleTimerPrefix):
		m.onSettleTimer(strings.TrimPrefix(id, settleTimerPrefix))
	case strings.HasPrefix(id, gatherTimerPrefix):
		m.onGatherTimer(strings.TrimPrefix(id, gatherTimerPrefix))
	case strings.HasPrefix(id, workerPollPrefix):
		m.onPollTimer(strings.TrimPrefix(id, workerPollPrefix))
	case strings.HasPrefix(id, workerRestPrefix):
		m.onRestTimer(strings.TrimPrefix(id, workerRestPrefix))
	case strings.HasPrefix(id, workerLostPrefix):
		m.onWorkerLost(strings.TrimPrefix(id, workerLostPrefix))
	case strings.HasPrefix(id, childrenTimerPrefix):
		m.onChildrenRetry(strings.TrimPrefix(id, childrenTimerPrefix))
	case strings.HasPrefix(id, attemptTimerPrefix):
		m.onAttemptTimer(strings.TrimPrefix(id, attemptTimerPrefix))
	}
}

// localDirs are the directories the running tasks of this machine's OpenCode work in: "" for
// the project, a worktree's path for an isolated task. A task on a worker is polled there
// (pollWorkers): with every running task on workers, the local OpenCode is not asked at all.
func (m *Machine) localDirs() map[string]bool {
	dirs := map[string]bool{}
	for _, id := range m.running() {
		if t := m.tasks[id]; t != nil && t.Worker == "" {
			dirs[worktreeDir(t)] = true
		}
	}
	return dirs
}

// onStatus is the polling fallback: a running task whose child OpenCode no longer lists as busy
// may have finished while its session.idle event was lost, so its messages are checked.
func (m *Machine) onStatus(p pending, ev Event) {
	busy := map[string]json.RawMessage{}
	read := ev.OK && json.Unmarshal(ev.Result, &busy) == nil
	if p.worker != "" {
		m.onPolledStatusRead(p.worker, read) // workers_poll.go
	}
	if ev.OK {
		if read {
			for _, id := range m.running() {
				t := m.task(id)
				_, isBusy := busy[t.SessionID]
				switch {
				case p.worker != t.Worker || !p.coversDir(m.sessionDir(t)): // another instance's read answers for it
				case t.restoring: // reconciled once its worker is up
				case t.SessionID == "" || t.Queued: // its session is being created, or it waits for a slot
				case isBusy:
					if m.polled(t.Worker) {
						m.polledStatus(t, busy[t.SessionID])
					}
				case t.switching:
					m.onQuietWhileSwitching(t)
				case t.promptSent:
					if !m.polled(t.Worker) || !m.messagesAsked(t.ID) { // a slow worker's reads do not pile up
						m.checkQuiet(t)
					}
				}
			}
		}
	} else {
		m.log("warn", "session.status failed: "+ev.Error)
	}
	m.armPoll()
}
