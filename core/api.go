package core

import (
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
func (m *Machine) ServeHTTP(req httpapi.Request, cfg config.APIConfig, now int64) httpapi.Response {
	return m.apiCache.Serve(req, apiStore{m}, cfg, now)
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
