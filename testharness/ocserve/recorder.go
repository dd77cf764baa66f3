package ocserve

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// Recorder keeps every event of one /event subscription so a test can wait
// for an event that may already have arrived, and assert on the order later.
type Recorder struct {
	mu     sync.Mutex
	events []Event
	added  chan struct{} // closed and replaced on every append
	done   chan struct{} // closed when the stream ends
}

// Record subscribes to /event until the test ends.
func (s *Server) Record(t testing.TB) *Recorder {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ch, err := s.Events(ctx)
	if err != nil {
		t.Fatalf("ocserve: subscribe /event: %v", err)
	}
	r := &Recorder{added: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for ev := range ch {
			r.mu.Lock()
			r.events = append(r.events, ev)
			close(r.added)
			r.added = make(chan struct{})
			r.mu.Unlock()
		}
	}()
	return r
}

// All returns the events received so far, in order.
func (r *Recorder) All() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

// Filter returns the events received so far that match.
func (r *Recorder) Filter(match func(Event) bool) []Event {
	var out []Event
	for _, e := range r.All() {
		if match(e) {
			out = append(out, e)
		}
	}
	return out
}

// Wait returns the first event (already received or still to come) that
// matches, or an error when ctx ends or the stream closes.
func (r *Recorder) Wait(ctx context.Context, match func(Event) bool) (Event, error) {
	seen, final := 0, false
	for {
		r.mu.Lock()
		events, added := r.events, r.added
		r.mu.Unlock()
		for ; seen < len(events); seen++ {
			if match(events[seen]) {
				return events[seen], nil
			}
		}
		select {
		case <-added:
		case <-r.done:
			if final {
				return Event{}, fmt.Errorf("event stream closed before a matching event")
			}
			final = true // scan what arrived before the close once more
		case <-ctx.Done():
			return Event{}, fmt.Errorf("no matching event among %d: %w", seen, ctx.Err())
		}
	}
}

// Is matches events of one type for one session ("" matches any session).
func Is(typ, sessionID string) func(Event) bool {
	return func(e Event) bool {
		return e.Type == typ && (sessionID == "" || e.SessionID() == sessionID)
	}
}
