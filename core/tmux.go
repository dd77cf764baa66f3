package core

// tmux panes: when the user turned them on (config.Config.Tmux.Enabled) and OpenCode runs inside tmux
// (config.Config.Tmux.Inside, set by the host from $TMUX), every child gets a pane attached to its
// session while it runs. The host carries out tmux.open and tmux.close without a reply: a pane
// that fails to open is the host's to log, and never changes the task.
//
// A task on a worker gets its pane too: tmux.open then carries the worker and how to reach it,
// and the host attaches the pane to that worker's server with its basic auth
// (docs/rationale/workers.md). No directory: the attach TUI takes it from the session, and the
// worker's paths mean nothing on this machine. The pane stays here, so tmux.close names no worker.

// tmuxOpen opens t's pane when its child starts running (a queued task gets its pane when it
// leaves the queue, a resumed one again for the resume). At most one pane per run.
func (m *Machine) tmuxOpen(t *run) {
	if !m.cfg.Tmux.Enabled || !m.cfg.Tmux.Inside || t.tmuxPane {
		return
	}
	t.tmuxPane = true
	e := Effect{Kind: EffectTmuxOpen, SessionID: t.SessionID, TaskID: t.ID, Title: t.Description}
	if t.Worker != "" {
		e.Worker, e.Remote = t.Worker, m.remote(t.Worker)
	}
	m.emit(e)
}

// tmuxClose closes t's pane, if one was opened for this run.
func (m *Machine) tmuxClose(t *run) {
	if !t.tmuxPane {
		return
	}
	t.tmuxPane = false
	m.emit(Effect{Kind: EffectTmuxClose, SessionID: t.SessionID, TaskID: t.ID})
}
