package core

// A worker's clock is its machine's, not ours. The core marks an attempt (a steer, the next
// model) with its own time and reads OpenCode's timestamps against that mark (an answer created
// before it is a stale one): for a task on a worker, the mark is read on the worker's clock.
//
// What the worker's clock reads is learned from the sessions the core creates there: a session's
// time.created was stamped between the request's ask and its answer, so the worker's clock minus
// ours lies in [created - answeredAt, created - askedAt]. Each creation narrows that range, and so,
// within two seconds, does the Date of each health answer the worker gives; one that does not meet it
// (the worker's clock was set since) starts it anew. The mark moves only when the range excludes
// 0: a clock in step with ours within a request's round trip (the same machine, NTP) changes
// nothing, so no answer is read differently unless the clocks surely differ.

// clockRange is what is known of a worker's clock minus ours, in ms.
type clockRange struct{ lo, hi int64 }

// noteWorkerClock narrows worker's range with a session it created at created (its clock), asked
// for at askedAt and answered at answeredAt (ours).
func (m *Machine) noteWorkerClock(worker string, created, askedAt, answeredAt int64) {
	if worker == "" || created <= 0 || askedAt <= 0 || answeredAt < askedAt {
		return
	}
	m.narrowWorkerClock(worker, clockRange{lo: created - answeredAt, hi: created - askedAt})
}

// noteWorkerDate narrows worker's range with the Date header of an answer it gave (date, in ms),
// asked for at askedAt and answered at answeredAt (ours). An HTTP date is a whole second, and a
// server may write the one it formatted for the second before (Bun, which OpenCode runs on, keeps
// the header it made and renews it each second; a real-OpenCode test saw it a second behind), so
// the worker's clock read between date and date + 1999 at some instant of the round trip: a range
// two seconds wide, enough to see a clock minutes or hours off before any session is created
// there (after a restart, the tasks restored on a worker had none until then).
func (m *Machine) noteWorkerDate(worker string, date, askedAt, answeredAt int64) {
	if worker == "" || date <= 0 || askedAt <= 0 || answeredAt < askedAt {
		return
	}
	m.narrowWorkerClock(worker, clockRange{lo: date - answeredAt, hi: date + 1999 - askedAt})
}

// narrowWorkerClock meets worker's range with seen, or starts it anew from seen when they do not
// meet (the worker's clock was set since).
func (m *Machine) narrowWorkerClock(worker string, seen clockRange) {
	if m.workerClocks == nil {
		m.workerClocks = map[string]clockRange{}
	}
	r, ok := m.workerClocks[worker]
	if ok && seen.lo <= r.hi && seen.hi >= r.lo {
		seen = clockRange{lo: max(r.lo, seen.lo), hi: min(r.hi, seen.hi)}
	}
	m.workerClocks[worker] = seen
}

// workerClockOffset is worker's clock minus ours: the middle of its range when the range excludes
// 0, else 0.
func (m *Machine) workerClockOffset(worker string) int64 {
	r, ok := m.workerClocks[worker]
	if !ok || (r.lo <= 0 && r.hi >= 0) {
		return 0
	}
	return r.lo + (r.hi-r.lo)/2
}

// ocTime is instant at of our clock as t's OpenCode's clock reads it. 0 (no mark) stays 0.
func (m *Machine) ocTime(t *run, at int64) int64 {
	if at == 0 || t.Worker == "" {
		return at
	}
	return at + m.workerClockOffset(t.Worker)
}
