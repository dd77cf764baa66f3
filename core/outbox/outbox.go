// Package outbox is the notices' delivery policy: the per-parent boxes of notices owed until
// OpenCode accepts them, when a box must wait, the backoff after a refusal, and whether a
// parent's messages already hold a notice (delivered, named since). It holds no notice's content
// of its own (a box queues the machine's notices, N) and emits nothing: the machine sends, arms
// the timers and records the acceptances (core/outbox.go tells the whole story).
package outbox

import (
	"sort"
	"strings"

	"github.com/asyncagents/asyncagents/core/ocevents"
)

// MaxInFlight is how many notice messages to one parent may be with OpenCode at once: one more
// than one lets a notice that falls due go at once while the previous is answered (children
// finishing spread out), and the bound still folds a burst of back-to-back ones into few requests.
const MaxInFlight = 2

// The backoff after a refused delivery: RetryBaseMs, doubling with each refusal in a row up to
// RetryMaxMs; a notice refused MaxTries times is given up for this process.
const (
	RetryBaseMs = 1000
	RetryMaxMs  = 60_000
	MaxTries    = 10
)

// Task is a task a notice tells of, with the NoticeOwed its record carries (0 for a notice the
// history does not hold: a stall's). EndSince is set on the end notice of a restored task the
// reconcile found ended: a notice of its end sent since then (by a process whose record of it
// was never written) counts as this one.
type Task struct {
	ID       string
	OwedAt   int64
	EndSince int64
}

// Box is the outbox of one parent session.
type Box[N any] struct {
	Queue []N
	// Check: the notices were restored (or a delivery failed), and the parent's messages must be
	// read before they go (Checking: that read is under way).
	Check, Checking bool
	// Retrying: a retry timer is armed.
	Retrying bool
	// Sending: notice messages to this parent with OpenCode and not answered yet. What falls due
	// meanwhile waits for an answer and goes with the rest as one message: when OpenCode is
	// busy, every request waits behind that work, and one message for several notices waits
	// once.
	Sending int
	// Waking: a message in flight asks for a model turn. Nothing else goes until it is answered,
	// and it went only once nothing else was in flight: the message that wakes the parent is the
	// last to reach it (a line after it would land in the turn it started, and cost one more).
	Waking bool
}

// Waits reports whether nothing may go from the box now: a read of the parent's messages, a
// retry's timer, a waking message or MaxInFlight messages are under way.
func (b *Box[N]) Waits() bool {
	return b.Checking || b.Retrying || b.Waking || b.Sending >= MaxInFlight
}

// Idle reports whether nothing is in the box or under way for it: it can be forgotten.
func (b *Box[N]) Idle() bool {
	return len(b.Queue) == 0 && !b.Check && !b.Checking && !b.Retrying && b.Sending == 0
}

// Boxes are the outboxes by parent, and the parents whose box is looked at when the step ends.
type Boxes[N any] struct {
	byParent map[string]*Box[N]
	ready    map[string]bool
}

// Get is parent's box, nil when it has none.
func (o *Boxes[N]) Get(parent string) *Box[N] { return o.byParent[parent] }

// Box is parent's box, made on first use.
func (o *Boxes[N]) Box(parent string) *Box[N] {
	if o.byParent == nil {
		o.byParent = map[string]*Box[N]{}
	}
	b := o.byParent[parent]
	if b == nil {
		b = &Box[N]{}
		o.byParent[parent] = b
	}
	return b
}

// Delete forgets parent's box.
func (o *Boxes[N]) Delete(parent string) { delete(o.byParent, parent) }

// Len is how many parents have a box.
func (o *Boxes[N]) Len() int { return len(o.byParent) }

// Parents are the parents with a box, in order.
func (o *Boxes[N]) Parents() []string { return sorted(o.byParent) }

// MarkReady has parent's box looked at when the step ends.
func (o *Boxes[N]) MarkReady(parent string) {
	if o.ready == nil {
		o.ready = map[string]bool{}
	}
	o.ready[parent] = true
}

// AnyReady reports whether a box is to be looked at.
func (o *Boxes[N]) AnyReady() bool { return len(o.ready) > 0 }

// TakeReady returns the parents whose box is to be looked at, in order (deterministic), and
// marks none ready any more.
func (o *Boxes[N]) TakeReady() []string {
	parents := sorted(o.ready)
	o.ready = nil
	return parents
}

func sorted[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Backoff is the delay before the next try of a box whose notices were refused tries times in
// a row (tries > 0).
func Backoff(tries int) int64 {
	return min(int64(RetryBaseMs)<<(tries-1), RetryMaxMs)
}

// GiveUp splits a box's queue after a refusal: the notices refused MaxTries times are given up
// (gaveUp: the most tries among them, 0 for none), the rest are kept, and tries is the most
// tries among those kept (0: none was refused, nothing waits for a backoff).
func GiveUp[N any](queue []N, triesOf func(N) int) (keep []N, tries, gaveUp int) {
	keep = queue[:0]
	for _, n := range queue {
		if t := triesOf(n); t >= MaxTries {
			gaveUp = max(gaveUp, t)
			continue
		}
		tries = max(tries, triesOf(n))
		keep = append(keep, n)
	}
	return keep, tries, gaveUp
}

// Delivered reports whether the parent's messages hold a notice of tasks: for each task, a user
// message created at or after the notice fell due whose synthetic text names it, or, for a task
// with EndSince, one since then that tells of its end (tellsOfEnd).
func Delivered(msgs []ocevents.Message, tasks []Task, tellsOfEnd func(string) bool) bool {
	for _, t := range tasks {
		switch {
		case t.EndSince != 0 && NamedSince(msgs, t.ID, t.EndSince, tellsOfEnd):
		case t.OwedAt == 0 || !NamedSince(msgs, t.ID, t.OwedAt, nil):
			return false
		}
	}
	return true
}

// NamedSince reports whether a user message created at or after since names the task id in a
// synthetic text (one that also passes tells, when given).
func NamedSince(msgs []ocevents.Message, id string, since int64, tells func(string) bool) bool {
	for i := len(msgs) - 1; i >= 0; i-- {
		msg := &msgs[i]
		if msg.Info.Role != "user" || msg.Info.Time.Created < since {
			continue
		}
		for _, part := range msg.Parts {
			if part.Type == "text" && part.Synthetic && strings.Contains(part.Text, id) && (tells == nil || tells(part.Text)) {
				return true
			}
		}
	}
	return false
}
