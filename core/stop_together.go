package core

// Several tasks stopped at once (the cascade, cancel all, the session-cost stop, a task and the
// tasks below it) all end before any queued task starts. Each stop frees a start slot: started
// at once, a queued sibling of the same parent would get a child session, be cancelled a moment
// later with the others, and have that session deleted, leaving a run that never happened in the
// batch's timeline. The queue is looked at once, when the last stop of the batch is done.

// stopTogether runs stop with the start queue held; nested calls hold it until the outermost ends.
func (m *Machine) stopTogether(stop func()) {
	m.starts.Begin()
	defer func() {
		if m.starts.End() {
			m.startQueued()
		}
	}()
	stop()
}
