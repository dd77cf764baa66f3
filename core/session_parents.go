package core

// sessionParents maps a session created under another (a task's child's subagent, the user's own
// subagent, a worker's session traced up to a task) to its parent session. It holds at most
// maxSessionsBelow entries in two generations: when the newer is half full, the older is dropped
// and the newer takes its place, and an entry read from the older moves back to the newer. A
// subagent still at work is read at each of its events, and the way above each task at work is
// read before a rotation (noteSessionBelow), so only sessions nobody needs are forgotten (a clear
// of one map lost the running ones too, with no walk to find them again on the local server).
type sessionParents struct {
	cur, old map[string]string
}

// get is session's parent ("" when unknown).
func (s *sessionParents) get(session string) string {
	if p, ok := s.cur[session]; ok {
		return p
	}
	p, ok := s.old[session]
	if ok {
		// Moved, not set: a rotation here would drop the older generation in the middle of a
		// walk that reads its next link from it.
		delete(s.old, session)
		s.cur[session] = p
	}
	return p
}

// full reports whether setting a session not yet held drops the older generation.
func (s *sessionParents) full(session string) bool {
	_, ok := s.cur[session]
	return !ok && len(s.cur) >= maxSessionsBelow/2
}

// set records session's parent.
func (s *sessionParents) set(session, parent string) {
	if s.cur == nil {
		s.cur = map[string]string{}
	}
	if s.full(session) {
		s.old, s.cur = s.cur, map[string]string{}
	}
	s.cur[session] = parent
}

// forget drops session (it was deleted).
func (s *sessionParents) forget(session string) {
	delete(s.cur, session)
	delete(s.old, session)
}
