package core

import "sort"

// The machine keeps two small indexes so that the work of one event does not grow with the
// history: with 10,000 restored tasks, scanning them all on every event put tens of
// milliseconds inside WebAssembly between a task's change and its SSE frame.
//
//   - active: the tasks not yet finished, in the order they became active. Finished ones are
//     dropped lazily, when the list is read, so no status change has to remember the index.
//   - batches: each batch's task IDs in launch order. A resumed task moves to a new batch; the
//     old list keeps its ID and the reader checks the task's BatchID.
type taskIndex struct {
	active    []string
	activeSet map[string]bool
	batches   map[string][]string
}

// indexTask records a task that was created, restored or resumed.
func (m *Machine) indexTask(t *run) {
	if m.index.activeSet == nil {
		m.index.activeSet = map[string]bool{}
		m.index.batches = map[string][]string{}
	}
	m.indexActive(t)
	m.index.batches[t.BatchID] = appendOnce(m.index.batches[t.BatchID], t.ID)
}

// indexActive adds a task still at work to the active list, once.
func (m *Machine) indexActive(t *run) {
	if !t.Status.Terminal() && !m.index.activeSet[t.ID] {
		m.index.activeSet[t.ID] = true
		m.index.active = append(m.index.active, t.ID)
	}
}

// appendOnce appends id to a batch's list unless it is already its last.
func appendOnce(ids []string, id string) []string {
	if len(ids) == 0 || ids[len(ids)-1] != id {
		return append(ids, id)
	}
	return ids
}

// rebuildIndex indexes every task afresh, in launch order (after a restore).
func (m *Machine) rebuildIndex() {
	view := m.apiView()
	m.index = taskIndex{activeSet: map[string]bool{}, batches: make(map[string][]string, len(view)/4+1)}
	slab, used := make([]string, len(view)), 0
	// A batch's tasks are launched in one turn, so they nearly always sit side by side in launch
	// order: each run of them takes one map update and one exact allocation, not one each (a
	// quarter of a 10,000-task restore went into this index otherwise).
	for i := 0; i < len(view); {
		batchID := view[i].BatchID
		j := i + 1
		for j < len(view) && view[j].BatchID == batchID {
			j++
		}
		ids := m.index.batches[batchID]
		if ids == nil {
			// Cut from one allocation for all (its capacity capped, so a later append copies).
			ids = slab[used : used : j-i+used]
			used += j - i
		}
		for _, t := range view[i:j] {
			if !t.Status.Terminal() {
				m.indexActive(t)
			}
			ids = append(ids, t.ID) // the view holds each task once: no repeat to guard against
		}
		m.index.batches[batchID] = ids
		i = j
	}
}

// activeTasks returns the tasks still at work, oldest first, dropping finished ones from the
// index as it goes.
func (m *Machine) activeTasks() []*run {
	var out []*run
	kept := m.index.active[:0]
	for _, id := range m.index.active {
		if t := m.tasks[id]; t != nil && !t.Status.Terminal() {
			kept = append(kept, id)
			out = append(out, t)
		} else {
			delete(m.index.activeSet, id)
		}
	}
	m.index.active = kept
	return out
}

// batch returns the tasks of a batch, in launch order.
func (m *Machine) batch(batchID string) []*run {
	var out []*run
	seen := map[string]bool{}
	for _, id := range m.index.batches[batchID] {
		if t := m.task(id); t != nil && t.BatchID == batchID && !seen[id] {
			seen[id] = true
			out = append(out, t)
		}
	}
	return out
}

// running returns the IDs of tasks still at work, sorted for deterministic effect order.
func (m *Machine) running() []string {
	var ids []string
	for _, t := range m.activeTasks() {
		ids = append(ids, t.ID)
	}
	sort.Strings(ids)
	return ids
}
