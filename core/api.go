package core

import (
	"fmt"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/httpapi"
	"github.com/asyncagents/asyncagents/core/task"
)

// The machine's side of the status API (package httpapi): the view of the store it reads, kept
// between requests, and its answer cache.

// httpapi.ServeHTTP answers one request from the machine's own tasks, without copying them (see
// httpapi.ServeTasks; Machine.Tasks copies every task, which at 10,000 tasks costs more than the
// request itself). The tasks are only read; recent answers to task reads are kept until the store
// changes (httpapi.Cache).
// The dashboard's one-time codes are the machine's too (httpapi.Codes), kept between requests.
func (m *Machine) ServeHTTP(req httpapi.Request, cfg config.APIConfig, now int64) httpapi.Response {
	if why := m.storageHealth(); why != "" {
		cfg.Degraded = why
	}
	if isWorkersRoute(req.Path) {
		cfg.Workers = m.workersBody()
	}
	r := m.apiCodes.Finish(m.apiCache.Serve(req, apiStore{m}, cfg, now), req, cfg, now)
	if r.Stream && r.Status == 200 {
		m.streamOpened()
	}
	m.readOnWorker(&r)
	return r
}

// apiStore is the machine as the status API reads it (httpapi.Store).
type apiStore struct{ m *Machine }

func (s apiStore) Tasks() []*task.Task { return s.m.apiTasks() }
func (s apiStore) Changes() uint64     { return s.m.changes }

// apiView lists the machine's tasks in launch order, shared, not copied: for reading only. It is
// kept between requests and rebuilt after storeChanged.
func (m *Machine) apiView() []*run {
	if m.view == nil {
		m.view = m.freshView()
	}
	return m.view
}

// apiTasks is apiView's records, for the status API: kept and rebuilt alike.
func (m *Machine) apiTasks() []*task.Task {
	if m.viewTasks == nil {
		view := m.apiView()
		m.viewTasks = make([]*task.Task, len(view))
		for i, t := range view {
			m.viewTasks[i] = &t.Task
		}
		m.viewTasks = m.mergedTasks(m.viewTasks)
	}
	return m.viewTasks
}

// storeChanged drops the cached view: call it whenever a task is added to or removed from the
// store, or the launch order changes.
func (m *Machine) storeChanged() { m.view, m.viewTasks = nil, nil }

// freshView resolves the launch order to tasks.
func (m *Machine) freshView() []*run {
	out := make([]*run, 0, len(m.order))
	for _, id := range m.order {
		if t, ok := m.tasks[id]; ok {
			out = append(out, t)
		}
	}
	return out
}

// httpapi.SnapshotFrame renders the snapshot event from the machine's own tasks, without copying them.
func (m *Machine) SnapshotFrame(now int64) string {
	return httpapi.Snapshot(m.apiTasks(), now)
}

// ServeHTTPEffects is ServeHTTP for a request that may change state: a cancel (POST
// /v1/tasks/:id/cancel, checked by httpapi) is carried out here, as a step carries out a tool's,
// and its effects (the abort, the notice, the history line, the event frames) come back for the
// host to carry out. Other requests answer as ServeHTTP does, with no effects.
func (m *Machine) ServeHTTPEffects(req httpapi.Request, cfg config.APIConfig, now int64) (httpapi.Response, []Effect) {
	r := m.ServeHTTP(req, cfg, now)
	if r.Permission != nil {
		return m.answerPermission(r, now)
	}
	if r.Merge != nil {
		return m.mergeFromAPI(r, now) // tool_merge.go
	}
	if r.Cancel == nil {
		return r, nil
	}
	id := r.Cancel.ID
	t := m.task(id)
	reason := r.CancelReason
	r.Cancel, r.CancelReason = nil, ""
	if t == nil {
		// Another process's task (history_files.go): that process alone may end it.
		return httpapi.Fail(409, fmt.Sprintf(apiForeignCancelFmt, id)), nil
	}
	m.changes++ // the cached answers show the task before the cancel
	if now > m.now {
		m.now = now
	}
	m.out = nil
	m.cancel(t, reason)
	m.readyYielded() // as a step ends: a held turn may wait for nothing now
	m.persistDirty()
	m.releaseTurns()
	effects := m.out
	m.out = nil
	out := t.Task
	httpapi.Shown(&out, m.now)
	b, err := task.AppendJSON(nil, &out)
	if err != nil {
		r.Status, r.Body = 500, `{"error":"internal error: encoding the response failed"}`
		return r, effects
	}
	r.Body = string(b)
	return r, effects
}
