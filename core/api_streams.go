package core

// Which task frames are made: the status API's event streams (/v1/events) get a frame for each
// change of a task, the whole task as the API shows it. In a fan-out that is one frame for every
// batch of a child's progress, a few kilobytes each, made, sent out of the core and read by the
// host only to find no stream to write it to: the dashboard is open now and then, the tasks
// change all the time. A host that says how many streams are open (api.streams) gets frames
// only while one is; a stream that opens gets the tasks as they are then in its snapshot
// (httpapi.Snapshot), so nothing it would have seen is missing. A host that never says keeps
// getting every frame.

// onAPIStreams takes the host's count of open event streams (after one closed, or at start).
func (m *Machine) onAPIStreams(open int) { m.streamsClosed = open <= 0 }

// streamOpened notes a stream the API just accepted: the host counts it once it is open.
func (m *Machine) streamOpened() { m.streamsClosed = false }

// streamsListen reports whether a frame for the event streams may have a reader.
func (m *Machine) streamsListen() bool { return !m.streamsClosed }
