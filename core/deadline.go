package core

import "sort"

// A task's wall-clock limit (asyncagents_task's timeout, or taskTimeoutMs) has a timer of its
// own, set through the host (EffectTimerSet), so that it fires at its time rather than at the
// next poll. The limit counts the time the task works, not the time it waits for the user: the
// stretches with a permission request unanswered are added to the deadline, and while one is
// unanswered no timer runs (the permission's own timeout, permission.timeoutMs, bounds the
// wait). The timer follows the task through every change (syncDeadlines runs at the end of each
// step over the tasks the step touched), and the poll checks the same deadline, so a task
// restored after a restart is timed out too.

// deadlineTimerPrefix names the timer of a task's wall-clock limit.
const deadlineTimerPrefix = "deadline:"

// deadline is when t's current run reaches its wall-clock limit, its permission waits not
// counted; 0 for no limit.
func (m *Machine) deadline(t *run) int64 {
	if t.TimeoutMs <= 0 {
		return 0
	}
	start := runStart(t)
	return start + t.TimeoutMs + permissionWaited(t, start, m.now)
}

// permissionWaited is how long, since from, t had a permission request unanswered (overlapping
// requests counted once); a request still unanswered counts up to now.
func permissionWaited(t *run, from, now int64) int64 {
	type span struct{ from, to int64 }
	var spans []span
	for _, r := range t.Permissions {
		end := r.RepliedAt
		if r.Reply == "" || end == 0 {
			end = now
		}
		if s := max(r.At, from); end > s {
			spans = append(spans, span{s, end})
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].from < spans[j].from })
	var total, reach int64
	for _, s := range spans {
		if s.from > reach {
			reach = s.from
		}
		if s.to > reach {
			total += s.to - reach
			reach = s.to
		}
	}
	return total
}

// wantDeadline is the deadline t's timer should be armed for: 0 while no limit runs (none set,
// the task waits in the queue or for the user, or it has ended).
func (m *Machine) wantDeadline(t *run) int64 {
	if t.Status.Terminal() || t.Queued || t.WaitingPermission() != nil {
		return 0
	}
	return m.deadline(t)
}

// syncDeadline arms, moves or clears t's deadline timer to match its state.
func (m *Machine) syncDeadline(t *run) {
	want := m.wantDeadline(t)
	if want == t.deadlineAt {
		return
	}
	t.deadlineAt = want
	if want == 0 {
		m.emit(Effect{Kind: EffectTimerClear, TimerID: deadlineTimerPrefix + t.ID})
		return
	}
	m.emit(Effect{Kind: EffectTimerSet, TimerID: deadlineTimerPrefix + t.ID, DelayMs: max(want-m.now, 0)})
}

// syncDeadlines brings the deadline timers of the tasks changed in this step up to date, in ID
// order so that the effects are the same on every host.
func (m *Machine) syncDeadlines() {
	ids := make([]string, 0, len(m.dirty))
	for id := range m.dirty {
		ids = append(ids, id)
	}
	sortStrings(ids)
	for _, id := range ids {
		if t := m.tasks[id]; t != nil {
			m.syncDeadline(t)
		}
	}
}

// onDeadline times a task out when its timer fires at or past its deadline; a timer that fires
// early (a host's clock) or for a deadline since moved is armed again.
func (m *Machine) onDeadline(id string) {
	t := m.task(id)
	if t == nil {
		return
	}
	t.deadlineAt = 0
	want := m.wantDeadline(t)
	if want != 0 && m.now >= want {
		m.timeOut(t)
		return
	}
	m.syncDeadline(t)
}
