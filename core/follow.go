package core

import (
	"github.com/asyncagents/asyncagents/core/httpapi"
)

// Follow applies history lines that another process wrote: `asyncagents serve` shows a
// project's history while the plugin in OpenCode keeps appending to it. Each task the lines
// change gets one SSE frame, as if the change had happened here, so the CLI's event stream is
// live too. With replace (the log was compacted, so the host read it whole) tasks the lines no
// longer hold are dropped.
//
// A follower is read-only: Follow never writes history, reconciles, or asks OpenCode anything,
// and its effects are SSE frames only (and a warning for corrupt lines).
func (m *Machine) Follow(now int64, lines string, replace bool) (RestoreResult, []Effect) {
	m.changes++
	if now > m.now {
		m.now = now
	}
	m.out = nil
	var res RestoreResult
	var before map[string]*run // the tasks the log held before it was compacted
	if replace {
		// Another process compacted the log: an index planned for the old one would not fit.
		m.pendingIndex = nil
		before = m.tasks
		m.tasks = map[string]*run{}
		m.storeChanged()
	}
	// Appended lines each become an event-stream frame, which shows the whole task: they are
	// read whole. A compacted log read again is mostly tasks already known and unchanged.
	touched, _, _, _ := m.applyHistory(lines, &res, true, replace)
	m.pruneOrder()
	m.rebuildIndex()
	type change struct {
		t     *run
		event string
	}
	var changes []change
	for _, id := range touched {
		t := m.tasks[id]
		if t == nil {
			continue // removed: the streams are not told (as by the plugin itself)
		}
		if old := before[id]; old != nil {
			t.sseSent = old.sseSent
		}
		prev, known := t.sseSent, t.sseSent != ""
		if !replace || !known || prev != t.Status {
			changes = append(changes, change{t, httpapi.TaskEventName(prev, t.Status, !known)})
		}
		t.sseSent = t.Status
	}
	switch {
	case !m.streamsListen(): // no stream reads them (api_streams.go)
	case len(changes) > MaxTaskFramesPerCall:
		// One resync frame stands for them all (coalesceFrames); none is encoded to be dropped.
		m.out = append(m.out, Effect{Kind: EffectSSEBroadcast, Frame: httpapi.ResyncFrame(len(changes))})
	default:
		for _, c := range changes {
			m.out = append(m.out, Effect{Kind: EffectSSEBroadcast, Frame: taskFrame(c.event, c.t.public(), m.now)})
		}
	}
	res.Restored = len(m.tasks)
	if res.Corrupt > 0 {
		m.log("warn", "task history: corrupt lines skipped while following")
	}
	out := m.out
	m.out = nil
	return res, out
}
