package core

import (
	"encoding/json"
	"fmt"

	"github.com/asyncagents/asyncagents/core/ocevents"
)

// A worker's pending permission requests, read whenever its stream comes up. The stream carries
// permission.asked and permission.replied only while it is open: a question a remote child asks
// during a drop, a network pause, before a woken worker's new stream is up, or while this parent
// restarts would never reach the user, and the child would wait on it for good. An answer given
// meanwhile (in `opencode attach`, or by the worker's own restart) would leave the task marked
// waiting. So each time a worker's stream comes up, the machine asks the worker which requests
// are pending (OpenCode's GET /permission, per directory as its instances are), marks those of
// its tasks it has not seen, and clears those of its marks the worker no longer holds.

// EffectPermissionList lists the permission requests OpenCode holds unanswered in Directory (on
// Worker, through Remote); replies OpenCode's [{id, sessionID, permission, patterns}].
const EffectPermissionList = "permission.list"

// PermissionGone is the reply the machine records for a request the worker no longer holds
// when it reads them again: answered or withdrawn while its stream was down.
const PermissionGone = "gone"

// askWorkerPermissions asks worker name for the requests pending in each directory where a task
// of this parent works there.
func (m *Machine) askWorkerPermissions(name string) {
	seen := map[string]bool{}
	for _, id := range m.running() {
		t := m.tasks[id]
		if t == nil || t.Worker != name || t.Queued || t.SessionID == "" {
			continue
		}
		if dir := m.sessionDir(t); !seen[dir] {
			seen[dir] = true
			m.request(Effect{Kind: EffectPermissionList, Worker: name, Remote: m.remote(name), Directory: dir},
				pending{worker: name, wt: &wtPending{dir: dir}})
		}
	}
}

// onPermissionsListed marks the listed requests of this worker's tasks in that directory, and
// clears the marks of requests no longer listed there.
func (m *Machine) onPermissionsListed(p pending, ev Event) {
	if !ev.OK {
		m.log("warn", fmt.Sprintf("could not read worker %s's pending permission requests: %s", p.worker, ev.Error))
		return
	}
	var listed []ocevents.PermissionAsked
	if err := json.Unmarshal(ev.Result, &listed); err != nil {
		m.log("warn", fmt.Sprintf("worker %s's pending permission requests unreadable: %v", p.worker, err))
		return
	}
	here := func(t *run) bool {
		return t != nil && t.Worker == p.worker && p.coversDir(m.sessionDir(t)) && !t.Status.Terminal()
	}
	held := map[string]bool{}
	for _, r := range listed {
		if r.ID == "" {
			continue
		}
		held[r.ID] = true
		if t := m.taskBelow(r.SessionID); here(t) && !t.knowsPermission(r.ID) {
			m.onPermissionAsked(r)
		}
	}
	for _, id := range m.running() {
		t := m.tasks[id]
		if !here(t) {
			continue
		}
		for i := range t.Permissions {
			if r := t.Permissions[i]; r.Reply == "" && !held[r.ID] {
				m.onPermissionReplied(ocevents.PermissionReplied{SessionID: r.SessionID, RequestID: r.ID, Reply: PermissionGone})
			}
		}
	}
}

// knowsPermission reports whether the task has seen request id, answered or not.
func (t *run) knowsPermission(id string) bool {
	for i := range t.Permissions {
		if t.Permissions[i].ID == id {
			return true
		}
	}
	return false
}
