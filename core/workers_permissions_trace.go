package core

import (
	"encoding/json"

	"github.com/asyncagents/asyncagents/core/ocevents"
)

// A worker's permission request from a session this parent has not seen created: a subagent the
// child ran itself, whose session.created came while the stream was down, or before this parent
// restarted (the sessions below tasks' children are not kept). The machine walks the session's
// parents on the worker (session.get, at most maxTraceSteps) until one is a task's child, records
// the way, and takes the request as if traced at once; a session that leads to none of its tasks
// is remembered as not its own, so a busy shared worker costs one walk per foreign session.

// maxTraceSteps bounds a walk, as taskBelow's does.
const maxTraceSteps = 8

// trace is one walk up a worker's sessions: the sessions walked, the first the one that asked,
// and the requests that wait on the walk.
type trace struct {
	worker   string
	chain    []string
	requests []ocevents.PermissionAsked
}

// onUntracedEvent takes a worker's event from a session no task is known above: a request
// starts a walk; the answer to one whose walk is under way is remembered, so the walk's end does
// not mark an answered request.
func (m *Machine) onUntracedEvent(worker string, decoded any) {
	switch p := decoded.(type) {
	case ocevents.PermissionAsked:
		m.traceRequest(worker, p)
	case ocevents.PermissionReplied:
		if m.traces[worker+"\x00"+p.SessionID] != nil {
			m.noteRepliedUnseen(p.RequestID)
		}
	}
}

// traceRequest starts (or joins) the walk from r's session on worker, unless that session is
// known to lead to none of the tasks.
func (m *Machine) traceRequest(worker string, r ocevents.PermissionAsked) {
	if r.SessionID == "" || m.untraced[r.SessionID] {
		return
	}
	key := worker + "\x00" + r.SessionID
	if tr := m.traces[key]; tr != nil {
		for _, q := range tr.requests {
			if q.ID == r.ID {
				return
			}
		}
		tr.requests = append(tr.requests, r)
		return
	}
	if m.traces == nil {
		m.traces = map[string]*trace{}
	}
	tr := &trace{worker: worker, chain: []string{r.SessionID}, requests: []ocevents.PermissionAsked{r}}
	m.traces[key] = tr
	m.askParentSession(tr)
}

func (m *Machine) askParentSession(tr *trace) {
	m.request(Effect{Kind: EffectSessionGet, SessionID: tr.chain[len(tr.chain)-1], Worker: tr.worker,
		Remote: m.remote(tr.worker), Directory: m.cfg.Workers[tr.worker].Directory}, pending{worker: tr.worker, trace: tr})
}

// onParentSession takes a session.get of the walk: a parent that is a task's child (or below
// one) ends it, with the requests taken; no parent ends it as foreign; any other goes on up. A
// failed read ends it unremembered: the next request from there walks again.
func (m *Machine) onParentSession(p pending, ev Event) {
	tr := p.trace
	delete(m.traces, tr.worker+"\x00"+tr.chain[0])
	var s struct {
		ID       string `json:"id"`
		ParentID string `json:"parentID"`
	}
	if !ev.OK || json.Unmarshal(ev.Result, &s) != nil || s.ID == "" {
		return
	}
	t := m.taskBelow(s.ParentID)
	if s.ParentID == "" || (t == nil && len(tr.chain) >= maxTraceSteps) {
		m.noteUntraced(tr)
		return
	}
	if t == nil {
		tr.chain = append(tr.chain, s.ParentID)
		m.traces[tr.worker+"\x00"+tr.chain[0]] = tr
		m.askParentSession(tr)
		return
	}
	if t.Worker != tr.worker || t.Status.Terminal() {
		return
	}
	if m.sessionsBelow == nil || len(m.sessionsBelow)+len(tr.chain) > maxSessionsBelow {
		m.sessionsBelow = map[string]string{} // as onSessionCreatedEvent: a lost trace at most
	}
	for i, session := range tr.chain {
		parent := s.ParentID
		if i+1 < len(tr.chain) {
			parent = tr.chain[i+1]
		}
		m.sessionsBelow[session] = parent
	}
	if m.taskBelow(tr.chain[0]) == nil {
		// Deeper below the child than taskBelow looks: as far as every other lookup goes, the
		// session is none of the tasks'.
		m.noteUntraced(tr)
		return
	}
	for _, r := range tr.requests {
		if !m.repliedUnseen[r.ID] {
			m.onListedPermission(t, r)
		}
	}
}

// noteUntraced remembers the sessions of a walk that led to none of the tasks (bounded as
// sessionsBelow), unless a task of that worker has no session known yet: a restored one whose
// child is still looked for (a worker's child has no parent there), whose subagents' walks end
// at a child not yet bound.
func (m *Machine) noteUntraced(tr *trace) {
	for _, id := range m.running() {
		if t := m.tasks[id]; t != nil && t.Worker == tr.worker && t.SessionID == "" && !t.Queued {
			return
		}
	}
	if m.untraced == nil || len(m.untraced) >= maxSessionsBelow {
		m.untraced = map[string]bool{}
	}
	for _, s := range tr.chain {
		m.untraced[s] = true
	}
}
