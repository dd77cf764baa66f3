package core

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/asyncagents/asyncagents/core/ocevents"
	"github.com/asyncagents/asyncagents/core/task"
)

// A worker's pending permission requests, read whenever its stream comes up. The stream carries
// permission.asked and permission.replied only while it is open: a question a remote child asks
// during a drop, a network pause, before a woken worker's new stream is up, or while this parent
// restarts would never reach the user, and the child would wait on it for good. An answer given
// meanwhile (in `opencode attach`, or by the worker's own restart) would leave the task marked
// waiting. So each time a worker's stream comes up, the machine asks the worker which requests
// are pending (OpenCode's GET /permission, per directory as its instances are), marks those of
// its tasks it has not seen, and clears those of its marks the worker no longer holds.
//
// The answer is a snapshot taken while the new stream already runs, and the two arrive apart:
// a request may be asked, or answered, between the snapshot and its arrival. So a read clears
// only the marks that were there when it was sent, never marks a request whose answer already
// came, and only the latest read of a directory is taken.

// EffectPermissionList lists the permission requests OpenCode holds unanswered in Directory (on
// Worker, through Remote); replies OpenCode's [{id, sessionID, permission, patterns}].
const EffectPermissionList = "permission.list"

// PermissionGone is the reply the machine records for a request the worker no longer holds
// when it reads them again: answered or withdrawn while its stream was down.
const PermissionGone = "gone"

// askWorkerPermissions asks worker name for the requests pending in each directory where a task
// of this parent works there.
func (m *Machine) askWorkerPermissions(name string) {
	w := m.link(name)
	var dirs []string
	asked := map[string][]string{}
	for _, id := range m.running() {
		t := m.tasks[id]
		if t == nil || t.Worker != name || t.Queued || t.SessionID == "" {
			continue
		}
		dir := m.sessionDir(t)
		if _, ok := asked[dir]; !ok {
			dirs = append(dirs, dir)
			asked[dir] = nil
		}
		for _, r := range t.Permissions {
			if r.Reply == "" {
				asked[dir] = append(asked[dir], r.ID)
			}
		}
	}
	for _, dir := range dirs {
		if _, out := w.permReads[dir]; out && m.polled(name) {
			continue // the last tick's read is still out: a slow worker's reads do not pile up
		}
		if w.permReads == nil {
			w.permReads = map[string]int64{}
		}
		w.permReads[dir] = m.request(Effect{Kind: EffectPermissionList, Worker: name, Remote: m.remote(name), Directory: dir},
			pending{worker: name, wt: &wtPending{dir: dir}, asked: asked[dir]})
	}
}

// onPermissionsListed marks the listed requests of this worker's tasks in that directory, and
// clears the marks the read was sent with that are no longer listed.
func (m *Machine) onPermissionsListed(p pending, ev Event) {
	w := m.link(p.worker)
	if w == nil || w.permReads[p.wt.dir] != ev.EffectID {
		return // a later read of the directory was sent: its answer is the newer
	}
	delete(w.permReads, p.wt.dir)
	if !ev.OK {
		m.log("warn", fmt.Sprintf("could not read the pending permission requests: %s", ev.Error))
		return
	}
	var listed []ocevents.PermissionAsked
	if err := json.Unmarshal(ev.Result, &listed); err != nil {
		m.log("warn", fmt.Sprintf("worker %s's pending permission requests unreadable: %v", p.worker, err))
		return
	}
	// Any task of this worker: a listed request is its session's wherever it works, and only
	// the marks the read was sent with (those of its directory) may be cleared.
	here := func(t *run) bool { return t != nil && t.Worker == p.worker && !t.Status.Terminal() }
	held := map[string]bool{}
	for _, r := range listed {
		if r.ID == "" {
			continue
		}
		held[r.ID] = true
		if m.repliedUnseen[r.ID] {
			continue
		}
		if t := m.taskBelow(r.SessionID); here(t) {
			m.onListedPermission(t, r)
		} else if t == nil {
			m.traceRequest(p.worker, r)
		}
	}
	for _, id := range m.running() {
		t := m.tasks[id]
		if !here(t) {
			continue
		}
		for i := range t.Permissions {
			if r := &t.Permissions[i]; r.Reply == "" && !held[r.ID] && slices.Contains(p.asked, r.ID) {
				m.clearPermission(t, r, PermissionGone)
			}
		}
	}
}

// onListedPermission takes request r, which the worker holds pending for task t: a request t
// never saw is marked and told, as permission.asked is; one a read cleared as gone is marked
// again; one t is marked on has its timeout armed again with the time left (a restart's).
func (m *Machine) onListedPermission(t *run, r ocevents.PermissionAsked) {
	known := t.permission(r.ID)
	switch {
	case known == nil:
		m.onPermissionAsked(r)
	case known.Reply == PermissionGone:
		t.Permissions = slices.DeleteFunc(t.Permissions, func(k task.PermissionRequest) bool { return k.ID == r.ID })
		m.onPermissionAsked(r)
	case known.Reply == "" && m.cfg.Permission.TimeoutMs > 0:
		left := max(m.cfg.Permission.TimeoutMs-(m.now-known.At), 1)
		m.emit(Effect{Kind: EffectTimerSet, TimerID: permissionTimerPrefix + t.ID + ":" + r.ID, DelayMs: left})
	}
}

// noteRepliedUnseen remembers the answer to a request no task was marked on.
func (m *Machine) noteRepliedUnseen(id string) {
	if m.repliedUnseen == nil || len(m.repliedUnseen) >= maxSessionsBelow {
		m.repliedUnseen = map[string]bool{} // the oldest answers: a read older than them is long gone
	}
	m.repliedUnseen[id] = true
}

// permission is the task's record of request id, answered or not (nil when it has none).
func (t *run) permission(id string) *task.PermissionRequest {
	for i := range t.Permissions {
		if t.Permissions[i].ID == id {
			return &t.Permissions[i]
		}
	}
	return nil
}
