package core

import (
	"fmt"

	"github.com/asyncagents/asyncagents/core/text"
)

// What the machine keeps per session and per effect has an end, so its memory stays flat over a
// long day: a task's per-call bookkeeping goes when it ends (finish), the parent models are
// bounded in number, and an effect whose answer never comes is given up after a while.

const (
	// maxSessionModels bounds the sessions whose latest model is remembered (a launch inherits
	// its parent's). The oldest entries go first: a session that talks again is remembered again.
	maxSessionModels = 1024
	// pendingTimeoutMs is how long an effect may go unanswered before the machine stops waiting
	// and takes it as failed, so that what waited on it (a launch, a read) goes its failure way.
	// Every effect a host carries out answers in seconds; this is for a host that lost one.
	pendingTimeoutMs = 15 * 60 * 1000
)

// sessionModels remembers each session's latest model, the oldest forgotten past
// maxSessionModels. fifo holds the sessions in the order their entry was made; an entry made
// again is pushed again, and the older push is skipped when it comes out (its seq differs).
type sessionModels struct {
	byID map[string]sessionModelEntry
	fifo []sessionModelRef
	seq  uint64
}

type sessionModelEntry struct {
	model string
	seq   uint64
}

type sessionModelRef struct {
	id  string
	seq uint64
}

func (s *sessionModels) get(id string) string { return s.byID[id].model }

func (s *sessionModels) set(id, model string) {
	if s.byID == nil {
		s.byID = map[string]sessionModelEntry{}
	}
	if e, ok := s.byID[id]; ok && e.model == model {
		return // most updates repeat the model: nothing to push
	}
	s.seq++
	s.byID[id] = sessionModelEntry{model: model, seq: s.seq}
	s.fifo = append(s.fifo, sessionModelRef{id: id, seq: s.seq})
	for len(s.byID) > maxSessionModels {
		s.popOldest()
	}
	if len(s.fifo) > 2*maxSessionModels {
		// Sessions that changed model often leave stale pushes: keep the live ones only.
		live := s.fifo[:0]
		for _, r := range s.fifo {
			if s.byID[r.id].seq == r.seq {
				live = append(live, r)
			}
		}
		s.fifo = append([]sessionModelRef(nil), live...)
	}
}

func (s *sessionModels) popOldest() {
	for len(s.fifo) > 0 {
		r := s.fifo[0]
		s.fifo = s.fifo[1:]
		if s.byID[r.id].seq == r.seq {
			delete(s.byID, r.id)
			return
		}
	}
}

func (s *sessionModels) forget(id string) { delete(s.byID, id) }

func (s *sessionModels) len() int { return len(s.byID) }

// expirePending gives up the effects unanswered for pendingTimeoutMs: each is answered as failed,
// so the flow that waited on it ends as it would on a failure.
func (m *Machine) expirePending() {
	var late []int64
	for id, p := range m.pending {
		if m.now-p.at >= pendingTimeoutMs {
			late = append(late, id)
		}
	}
	sortInt64s(late)
	for _, id := range late {
		m.onEffectDone(Event{Type: EventEffectDone, EffectID: id, OK: false,
			Error: fmt.Sprintf(pendingExpiredFmt, text.Duration(pendingTimeoutMs))})
	}
}
