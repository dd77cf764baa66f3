package core

// History retention: the store keeps at most history.maxTasks tasks, and no finished task
// started more than history.maxAgeDays ago. The oldest finished tasks go first; a task still at
// work is always kept. m.order is in launch order, so the tasks to drop are at its front: each
// pass pops what it drops from the front and stops at the first finished task it keeps, so the
// cost per change is constant amortised (the tasks still at work it steps over are the few
// running or queued ones).

const dayMs = 24 * 60 * 60 * 1000

// orderSlack is how many gone IDs the order may hold beyond the store's size before it is
// rebuilt: small stores are not rebuilt on every drop.
const orderSlack = 64

// pruneHistory drops the tasks past the limits and returns how many went. persist: each drop is
// written to the history as a removal (while running); at restore the caller rewrites the log.
func (m *Machine) pruneHistory(persist bool) int {
	maxTasks := m.cfg.History.MaxTasks
	cutoff := m.now - int64(m.cfg.History.MaxAgeDays)*dayMs
	dropped := 0
	for i := 0; i < len(m.order); {
		id := m.order[i]
		t := m.tasks[id]
		if t == nil {
			if i == 0 {
				m.order = m.order[1:] // a task forgotten earlier
				continue
			}
			i++
			continue
		}
		if !t.Status.Terminal() {
			i++ // at work: kept, and the ones after it may still go
			continue
		}
		if len(m.tasks) <= maxTasks && t.StartedAt >= cutoff {
			break // launch order: the finished tasks after this one are newer
		}
		if holdsUnmerged(t) {
			i++ // its branch waits for asyncagents_merge: kept like a task at work
			continue
		}
		m.dropTask(t, persist)
		dropped++
		if i == 0 {
			m.order = m.order[1:]
		} else {
			i++ // left in the order, gone from the store: popped once the front reaches it
		}
	}
	if dropped > 0 {
		m.storeChanged()
	}
	if len(m.order) > 2*len(m.tasks)+orderSlack {
		// Drops behind a task still at work left their IDs in the order: past twice the store's
		// size, it is rebuilt, which costs as much as the drops that made it worth it.
		order := make([]string, 0, len(m.tasks))
		for _, id := range m.order {
			if m.tasks[id] != nil {
				order = append(order, id)
			}
		}
		m.order = order
	}
	return dropped
}

// dropTask removes a finished task and what the machine keeps beside it: its session's entry
// and its place in its batch.
func (m *Machine) dropTask(t *run, persist bool) {
	if t.SessionID != "" && m.sessions[t.SessionID] == t.ID {
		delete(m.sessions, t.SessionID)
	}
	if ids, ok := m.index.batches[t.BatchID]; ok {
		kept := ids[:0]
		for _, id := range ids {
			if id != t.ID {
				kept = append(kept, id)
			}
		}
		if len(kept) == 0 {
			delete(m.index.batches, t.BatchID)
		} else {
			m.index.batches[t.BatchID] = kept
		}
	}
	if persist {
		m.forget(t.ID)
		return
	}
	delete(m.tasks, t.ID)
}
