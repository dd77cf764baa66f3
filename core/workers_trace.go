package core

import (
	"encoding/json"

	"github.com/asyncagents/asyncagents/core/ocevents"
)

// A worker's event from a session this parent has not seen created: a subagent the child ran
// itself, whose session.created came while the stream was down, or before this parent restarted
// (the sessions below tasks' children are not kept). A permission request there, or a model
// call's spending (an assistant message, a step's end), has the machine walk the session's parents
// on the worker (session.get, at most maxTraceSteps) until one is a task's child; it records the
// way, and takes the events that waited on the walk as if traced at once, so the request reaches
// the user and the spending counts toward the task's budgets. A session that leads to none of its
// tasks is remembered as not its own, so a busy shared worker costs one walk per foreign session.

// maxTraceSteps bounds a walk: as far as taskBelow looks, and no further.
const maxTraceSteps = maxSessionHops

// walkRetryMs is how long a failed walk keeps spending from starting another from its session.
const walkRetryMs = 30_000

// maxTraceSpending bounds the spending events a walk holds (a message's updates are held as its
// latest); past it the oldest go.
const maxTraceSpending = 64

// trace is one walk up a worker's sessions: the sessions walked, the first the one whose event
// started it, and the requests and spending events that wait on the walk.
type trace struct {
	worker   string
	chain    []string
	requests []ocevents.PermissionAsked
	spending []any // ocevents.MessageUpdated and ocevents.PartUpdated, in their order
}

// onUntracedEvent takes a worker's event from a session no task is known above: a request or a
// model call's spending starts a walk (or waits on the one under way); the answer to a request
// whose walk is under way is remembered, so the walk's end does not mark an answered request.
func (m *Machine) onUntracedEvent(worker string, decoded any) {
	switch p := decoded.(type) {
	case ocevents.PermissionAsked:
		m.traceRequest(worker, p)
	case ocevents.PermissionReplied:
		if m.traces[worker+"\x00"+p.SessionID] != nil {
			m.noteRepliedUnseen(p.RequestID)
		}
	case ocevents.MessageUpdated:
		if p.Info.Role == "assistant" {
			m.traceSpending(worker, p.Info.SessionID, p)
		}
	case ocevents.PartUpdated:
		if p.Part.Type == "step-finish" {
			m.traceSpending(worker, p.Part.SessionID, p)
		}
	}
}

// traceRequest has r wait on the walk from its session on worker.
func (m *Machine) traceRequest(worker string, r ocevents.PermissionAsked) {
	tr := m.traceFrom(worker, r.SessionID)
	if tr == nil {
		return
	}
	for _, q := range tr.requests {
		if q.ID == r.ID {
			return
		}
	}
	tr.requests = append(tr.requests, r)
}

// traceSpending has a model call's spending event wait on the walk from its session on worker.
// After a failed walk from there, spending starts none for walkRetryMs: a session the worker
// cannot read from the tasks' directory (another project's, on a worker shared by two) would
// otherwise cost a read at each of its model calls. A request always walks: one lost is a child
// waiting for good.
func (m *Machine) traceSpending(worker, session string, ev any) {
	if at, ok := m.walkHeld[session]; ok && m.now-at < walkRetryMs && m.traces[worker+"\x00"+session] == nil {
		return
	}
	tr := m.traceFrom(worker, session)
	if tr == nil {
		return
	}
	if u, ok := ev.(ocevents.MessageUpdated); ok {
		for i, held := range tr.spending {
			if h, ok := held.(ocevents.MessageUpdated); ok && h.Info.ID == u.Info.ID {
				tr.spending[i] = u // a message's update carries its whole figure: the latest will do
				return
			}
		}
	}
	if len(tr.spending) >= maxTraceSpending {
		tr.spending = append(tr.spending[:0], tr.spending[1:]...)
	}
	tr.spending = append(tr.spending, ev)
}

// traceFrom is the walk from session on worker: the one under way, or one started now; nil when
// that session is known to lead to none of the tasks.
func (m *Machine) traceFrom(worker, session string) *trace {
	if session == "" || m.untraced[session] {
		return nil
	}
	key := worker + "\x00" + session
	if tr := m.traces[key]; tr != nil {
		return tr
	}
	if m.traces == nil {
		m.traces = map[string]*trace{}
	}
	tr := &trace{worker: worker, chain: []string{session}}
	m.traces[key] = tr
	m.askParentSession(tr)
	return tr
}

func (m *Machine) askParentSession(tr *trace) {
	m.request(Effect{Kind: EffectSessionGet, SessionID: tr.chain[len(tr.chain)-1], Worker: tr.worker,
		Remote: m.remote(tr.worker), Directory: m.cfg.Workers[tr.worker].Directory}, pending{worker: tr.worker, trace: tr})
}

// onParentSession takes a session.get of the walk: a parent that is a task's child (or below
// one) ends it, with the events that waited taken; no parent ends it as foreign; any other goes
// on up. A failed read ends it unremembered: the next request from there walks again, and the
// next spending after walkRetryMs.
func (m *Machine) onParentSession(p pending, ev Event) {
	tr := p.trace
	delete(m.traces, tr.worker+"\x00"+tr.chain[0])
	var s struct {
		ID       string `json:"id"`
		ParentID string `json:"parentID"`
	}
	if !ev.OK || json.Unmarshal(ev.Result, &s) != nil || s.ID == "" {
		m.holdSpendingWalks(tr.chain[0])
		return
	}
	delete(m.walkHeld, tr.chain[0])
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
	// The way is recorded even to a task that has ended (or went to another worker, rerun): the
	// session's later events then find that task at once and are passed over, with no walk each.
	for i, session := range tr.chain {
		parent := s.ParentID
		if i+1 < len(tr.chain) {
			parent = tr.chain[i+1]
		}
		m.noteSessionBelow(session, parent)
	}
	if m.taskBelow(tr.chain[0]) == nil {
		// Deeper below the child than taskBelow looks: as far as every other lookup goes, the
		// session is none of the tasks'.
		m.noteUntraced(tr)
		return
	}
	if t.Worker != tr.worker || t.Status.Terminal() {
		return
	}
	for _, ev := range tr.spending {
		m.onDecoded(ev) // traced now: counted toward the task as any subagent's (track.go)
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
// at a child not yet bound. Its spending then waits walkRetryMs before walking again.
func (m *Machine) noteUntraced(tr *trace) {
	for _, id := range m.running() {
		if t := m.tasks[id]; t != nil && t.Worker == tr.worker && t.SessionID == "" && !t.Queued {
			m.holdSpendingWalks(tr.chain[0])
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

// holdSpendingWalks keeps session's spending from starting a walk for walkRetryMs (traceSpending).
func (m *Machine) holdSpendingWalks(session string) {
	if m.walkHeld == nil || len(m.walkHeld) >= maxSessionsBelow {
		m.walkHeld = map[string]int64{}
	}
	m.walkHeld[session] = m.now
}
