package core

// tmux panes: when the user turned them on (config.Config.Tmux.Enabled) and OpenCode runs inside tmux
// (config.Config.Tmux.Inside, set by the host from $TMUX), every child gets a pane attached to its
// session while it runs. The host carries out tmux.open and tmux.close without a reply: a pane
// that fails to open is the host's to log, and never changes the task.

// tmuxOpen opens t's pane when its child starts running (a queued task gets its pane when it
// leaves the queue, a resumed one again for the resume). At most one pane per run.
func (m *Machine) tmuxOpen(t *run) {
	if !m.cfg.Tmux.Enabled || !m.cfg.Tmux.Inside || t.tmuxPane || t.Worker != "" { // a pane attaches to the local server
		return
	}
	t.tmuxPane = true
	m.emit(Effect{Kind: EffectTmuxOpen, SessionID: t.SessionID, TaskID: t.ID, Title: t.Description})
}

// tmuxClose closes t's pane, if one was opened for this run.
func (m *Machine) tmuxClose(t *run) {
	if !t.tmuxPane {
		return
	}
	t.tmuxPane = false
	m.emit(Effect{Kind: EffectTmuxClose, SessionID: t.SessionID, TaskID: t.ID})
}
