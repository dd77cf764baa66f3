package core

import (
	"encoding/json"
	"strconv"

	"github.com/asyncagents/asyncagents/core/task"
)

// A task restored at work with no session may have one all the same: OpenCode made it, and the
// record that names it never reached the history (a full disk, or a stop between OpenCode's
// answer and the record). Making another would run the child twice and tell the parent twice.
// So every child session is made with metadata naming its task (childMetadata), and such a task
// first looks among its parent's children (session.children; on a worker session.list) for the
// one that names it. Found, it is adopted: bound, then reconciled like any restored task with a
// session. Not found, its session is made as at a launch.

// childMetaKey is the key of the metadata the core gives every child session it makes.
const childMetaKey = "asyncagents"

// childMetadata is session.create's metadata for t's child: {"asyncagents": {"task": id}}.
func childMetadata(taskID string) map[string]any {
	return map[string]any{childMetaKey: map[string]any{"task": taskID}}
}

// A failed children read is asked again, childrenRetries times childrenRetryMs apart, before
// the task's session is made anew: a duplicate is better than a lost task, but OpenCode answering
// one read badly while it starts is no sign that the child is not there (docs/rationale/history.md).
const (
	childrenTimerPrefix = "children.retry:"
	childrenRetries     = reconcileRetries
	childrenRetryMs     = reconcileRetryMs
)

// findChild asks for t's parent's children; onChildrenListed goes on. t counts as being created
// meanwhile: nothing else starts it. A worker's OpenCode answers 404 for the children of a
// parent it does not hold (the parent is local): there the sessions titled as t's child are
// listed, and those of its parent picked.
func (m *Machine) findChild(t *run) {
	t.creating = true
	e := Effect{Kind: EffectSessionChildren, SessionID: t.ParentSessionID, TaskID: t.ID}
	if t.Worker != "" {
		e = Effect{Kind: EffectSessionList, Title: childTitle(t), TaskID: t.ID}
	}
	m.request(e, pending{taskID: t.ID})
}

// onChildrenListed adopts the child that names the task, or has its session made.
func (m *Machine) onChildrenListed(p pending, ev Event) {
	t := m.task(p.taskID)
	if t == nil {
		return
	}
	t.creating = false
	var children []struct {
		ID       string                     `json:"id"`
		ParentID string                     `json:"parentID"`
		Metadata map[string]json.RawMessage `json:"metadata"`
	}
	ok := ev.OK && json.Unmarshal(ev.Result, &children) == nil
	if !ok {
		m.childrenReadFailed(t, ev)
		return
	}
	t.unbound, t.childReads = false, 0
	found := ""
	for _, c := range children {
		var meta struct {
			Task string `json:"task"`
		}
		// A worker's child has no parent there (one made before that change names the local one).
		parentOK := c.ParentID == t.ParentSessionID || (t.Worker != "" && c.ParentID == "")
		if parentOK && json.Unmarshal(c.Metadata[childMetaKey], &meta) == nil && meta.Task == t.ID && c.ID != "" {
			found = c.ID
			break
		}
	}
	switch {
	case found == "" && t.Status.Terminal():
	case found == "":
		if !m.stopIfDue(t) {
			m.startTask(t)
		}
	case t.Status.Terminal():
		// Cancelled while it was looked for: the child goes, as one made meanwhile would.
		m.request(Effect{Kind: EffectSessionDelete, TaskID: t.ID, SessionID: found}, pending{taskID: t.ID})
	default:
		m.log("info", "task "+t.ID+": adopted its child session "+found+", made before the restart but not in the history")
		m.bindSession(t, found)
		m.touch(t)
		m.reconcileOn(t.Worker, m.sessionDir(t), []string{t.ID})
		if t.Worker != "" && m.workerUp(t.Worker) {
			m.askWorkerPermissions(t.Worker) // a question its child asked unbound was not taken
		}
	}
}

// childrenReadFailed asks again later, or makes the task's session. A task on a worker that is
// down waits for the worker's return, which starts it (recheckWorker) and so looks again.
func (m *Machine) childrenReadFailed(t *run, ev Event) {
	why := ev.Error
	if ev.OK {
		why = "the answer is not a list of sessions"
	}
	switch {
	case t.Status.Terminal():
		t.unbound = false
	case !ev.OK && m.remoteDown(t):
		m.log("warn", "task "+t.ID+": its child could not be looked for on a worker that is down, looked for at its return: "+why)
	case t.childReads < childrenRetries:
		t.childReads++
		m.log("warn", "task "+t.ID+": reading its parent's children failed (try "+strconv.Itoa(t.childReads)+" of "+strconv.Itoa(childrenRetries+1)+"), asking again in 1 s: "+why)
		m.emit(Effect{Kind: EffectTimerSet, TimerID: childrenTimerPrefix + t.ID, DelayMs: childrenRetryMs})
	default:
		tries := t.childReads + 1
		t.unbound, t.childReads = false, 0
		if m.stopIfDue(t) {
			return
		}
		m.log("warn", "task "+t.ID+": reading its parent's children failed "+strconv.Itoa(tries)+" times; its child session is made anew, though one made before the restart may run too: "+why)
		m.startTask(t)
	}
}

// onChildrenRetry looks for t's child again.
func (m *Machine) onChildrenRetry(id string) {
	if t := m.task(id); t != nil && !t.Status.Terminal() && t.unbound && t.SessionID == "" {
		m.startTask(t)
	}
}

// neverPrompted says whether a child's messages hold nothing: OpenCode made it, and the stop came
// before its prompt was stored.
func neverPrompted(raw json.RawMessage) bool {
	var msgs []json.RawMessage
	return json.Unmarshal(raw, &msgs) == nil && msgs != nil && len(msgs) == 0
}

// onReconcileNeverPrompted starts a restored child that was never prompted (an adopted one, or
// one whose session the history holds, when the stop fell between the session's making and its
// prompt): the task never began, so it begins now instead of ending as interrupted. True when
// it did.
func (m *Machine) onReconcileNeverPrompted(t *run, p pending, ev Event) bool {
	if p.busy || !ev.OK || !neverPrompted(ev.Result) || t.Status != task.StatusRunning {
		return false
	}
	m.startTask(t)
	return true
}
