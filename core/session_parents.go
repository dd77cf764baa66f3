package core

// sessionParents maps a session created under another (a task's child's subagent, the user's own
// subagent, a worker's session traced up to a task) to its parent session. It holds at most
// maxSessionsBelow entries in two generations: when the newer is half full, the older is dropped
// and the newer takes its place, and an entry read from the older moves back to the newer. A
// subagent still at work is read at each of its events, so only sessions nobody has heard from
// for a whole generation are forgotten (a clear of one map lost the running ones too, with no
// walk to find them again on the local server).
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
		delete(s.old, session)
		s.set(session, p)
	}
	return p
}

// set records session's parent.
func (s *sessionParents) set(session, parent string) {
	if s.cur == nil {
		s.cur = map[string]string{}
	}
	if _, ok := s.cur[session]; !ok && len(s.cur) >= maxSessionsBelow/2 {
		s.old, s.cur = s.cur, map[string]string{}
	}
	s.cur[session] = parent
}

// forget drops session (it was deleted).
func (s *sessionParents) forget(session string) {
	delete(s.cur, session)
	delete(s.old, session)
}
