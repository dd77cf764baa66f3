package core

// A running child's progress (a tool call seen, a text part ended, a model call counted, its
// usage) changes its task many times a second across a fan-out, and a line per change was the
// whole task each time: most of a fan-out's history, and much of the core's work on a worker's
// batch (docs/rationale/history.md). Progress is what the history may keep late: it is written
// with the task's next change of any other kind (which writes the whole task, progress included),
// or at the latest ProgressWriteMs after it came. What a crash can lose is that much of a running
// task's progress, never a result: a result, a status, a notice owed, a permission asked all
// touch the task and are written in their step, before anyone is told. A task's usage and the
// marks that say which messages it counted are in the same record, so a record written late is
// late as a whole and never counts a message twice; the restart's reconcile reads the child's
// messages again from OpenCode anyway.
//
// The status API's event streams still get each progress change in its step (a task frame), so
// the dashboard and the TUI follow a child as closely as before.

// ProgressWriteMs is the longest a progress change waits for its history line.
const ProgressWriteMs = 5000

// ProgressTimer is the timer after which the progress held is written.
const ProgressTimer = "history.progress"

// touchProgress marks t's progress changed in this step: shown on the event streams now, written
// to the history with t's next change or when the progress timer fires.
func (m *Machine) touchProgress(t *run) {
	if m.dirty[t.ID] {
		return
	}
	if m.progressed == nil {
		m.progressed = map[string]bool{}
	}
	m.progressed[t.ID] = true
	if m.progressHeld == nil {
		m.progressHeld = map[string]bool{}
	}
	m.progressHeld[t.ID] = true
}

// armProgress sets the progress timer when the step ends with progress held and none is set. No
// effect ID, as for the history's own effects: the step's other effects keep theirs.
func (m *Machine) armProgress() {
	if len(m.progressHeld) == 0 || m.progressArmed {
		return
	}
	m.progressArmed = true
	m.out = append(m.out, Effect{Kind: EffectTimerSet, TimerID: ProgressTimer, DelayMs: ProgressWriteMs})
}

// writeProgress makes every task whose progress is held dirty, so that this step writes it. The
// event streams had each change in its step: the line goes without a frame (progressFramed).
func (m *Machine) writeProgress() {
	m.progressArmed = false
	for id := range m.progressHeld {
		if m.tasks[id] != nil {
			m.touch(m.tasks[id])
			if m.progressFramed == nil {
				m.progressFramed = map[string]bool{}
			}
			m.progressFramed[id] = true
		}
	}
	m.progressHeld = nil
}

// progressFrames is the event streams' frames of the tasks whose progress alone changed in this
// step (a task written in it has its frame with its line); it forgets them.
func (m *Machine) progressFrames() []Effect {
	if len(m.progressed) == 0 {
		return nil
	}
	progressed := m.progressed
	m.progressed = nil
	if !m.streamsListen() {
		return nil
	}
	ids := make([]string, 0, len(progressed))
	for id := range progressed {
		if !m.dirty[id] {
			ids = append(ids, id)
		}
	}
	sortStrings(ids)
	var frames []Effect
	for _, id := range ids {
		if t := m.tasks[id]; t != nil {
			frames = append(frames, m.taskFrameOf(t, t.public()))
		}
	}
	return frames
}
