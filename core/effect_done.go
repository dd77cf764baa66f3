package core

import "fmt"

// onEffectDone hands an effect's result to whatever was waiting for it.
func (m *Machine) onEffectDone(ev Event) {
	p, ok := m.pending[ev.EffectID]
	if !ok {
		m.log("warn", fmt.Sprintf("result for unknown effect %d ignored", ev.EffectID))
		return
	}
	delete(m.pending, ev.EffectID)
	if len(m.gathering) > 0 && (p.kind == EffectMessages || p.kind == EffectStatus) {
		m.regather() // a read that held notices came back (workers_poll_gather.go)
	}
	switch p.kind {
	case EffectAgentsList:
		if p.worker != "" {
			m.onWorkerAgents(p, ev)
		} else {
			m.onAgentsListed(ev)
		}
	case EffectSessionCreate:
		m.onSessionCreated(p, ev)
	case EffectPromptAsync:
		if p.forkContext {
			m.onForkContextSent(p, ev)
			return
		}
		if p.notice {
			m.onNoticeDone(p, ev)
			return
		}
		m.onPromptSent(p, ev)
	case EffectMessages:
		if p.outbox != "" {
			m.onOutboxChecked(p, ev)
			return
		}
		if p.restored {
			m.onReconcileMessages(p, ev)
			return
		}
		if p.fork {
			m.onForkMessages(p, ev)
			return
		}
		if p.sub != "" {
			m.onPolledSubMessages(p, ev)
			return
		}
		if p.settleEnd != 0 {
			m.onSettleMessages(p, ev)
			return
		}
		m.onMessages(p, ev)
	case EffectStatus:
		if p.reconcile != nil {
			m.onReconcileStatus(p, ev)
			return
		}
		m.onStatus(p, ev)
	case EffectWorkerHealth:
		m.onWorkerHealth(p, ev)
	case EffectSessionGet:
		if p.trace != nil {
			m.onParentSession(p, ev)
			return
		}
		m.onResumeChecked(p, ev)
	case EffectSessionChildren, EffectSessionList:
		m.onChildrenListed(p, ev)
	case EffectSessionDelete:
		if !ev.OK {
			m.log("warn", "could not delete the session of cancelled task "+p.taskID+": "+ev.Error)
		}
	case EffectHistorySync:
		m.onHistorySynced(p, ev)
	case EffectSummarize:
		m.onCompacted(p, ev)
	case EffectPermissionReply:
		m.onPermissionReplyDone(p, ev)
	case EffectPermissionList:
		m.onPermissionsListed(p, ev)
	case EffectAbort:
		if p.switchModel {
			m.onAbortedForSwitch(p, ev)
			return
		}
		if !ev.OK {
			m.log("warn", "could not abort the child session of task "+p.taskID+": "+ev.Error)
		}
		m.onChildAborted(p.taskID)
	default:
		m.onWorktreeDone(p, ev)
	}
}
