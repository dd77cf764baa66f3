package core

import "github.com/asyncagents/asyncagents/core/ocevents"

// FollowRule is how a host may group the events of a worker's stream before it feeds them to the
// core: a remote child streams about a hundred events a step (parts going pending, running,
// completed; its message's tokens growing), each one a step of the core on the parent's machine
// with its history line and its frame. Grouped, the events of a quarter of a second are one step,
// and a task they change is written once. What may wait, and what one event may stand for, is
// the core's to say; the host only follows the rule (docs/rationale/workers.md).
//
// An event whose type is in Defer may wait, at most BatchMs after the first that waits; any
// other event goes at once, with every event that waits before it, in one opencode event
// (Events, in the stream's order). For a type in Coalesce, a waiting event is dropped when a
// later one of that type has the same key (the value at that dot-separated path of its
// properties, a string): OpenCode's updates carry the whole part, message or session, so the
// later one says all the earlier said. The later one keeps its own place in the order.
//
// Types are the event types the core reads from the stream (absent: those it subscribes to); a
// host passes over any other without decoding it. The stream is mostly text deltas, and a
// worker's session.updated, a kilobyte each, comes with every step of a child.
type FollowRule struct {
	BatchMs  int               `json:"batchMs"`
	Defer    []string          `json:"defer"`
	Coalesce map[string]string `json:"coalesce"`
	Types    []string          `json:"types,omitempty"`
}

// workerFollowRule: progress waits a quarter of a second (the TUI and the dashboard show no
// finer); a child's end, error, permission request or deletion goes at once, so a notice or a
// question is not held up. session.status waits too: a child's idle status is followed by
// session.idle, which does not wait. A worker's session.updated is not read: a session's title
// names the batches it launches, and a session on a worker launches none of ours.
var workerFollowRule = FollowRule{
	BatchMs: 250,
	Defer:   []string{"message.part.updated", "message.updated", "session.status"},
	Coalesce: map[string]string{
		"message.part.updated": "part.id",
		"message.updated":      "info.id",
	},
	Types: workerStreamTypes(),
}

// WorkerFollowRule is the rule the core gives a host with each worker.follow, for a benchmark
// that follows the workers' streams as a host does (a copy: changing it changes nothing here).
func WorkerFollowRule() FollowRule {
	r := workerFollowRule
	r.Defer = append([]string(nil), r.Defer...)
	r.Types = append([]string(nil), r.Types...)
	r.Coalesce = map[string]string{}
	for k, v := range workerFollowRule.Coalesce {
		r.Coalesce[k] = v
	}
	return r
}

// workerReads is workerFollowRule.Types as a set.
var workerReads = func() map[string]bool {
	set := map[string]bool{}
	for _, t := range workerFollowRule.Types {
		set[t] = true
	}
	return set
}()

// workerStreamTypes: the types the core takes from OpenCode, but session.updated.
func workerStreamTypes() []string {
	var types []string
	for _, t := range ocevents.Subscribed() {
		if t != "session.updated" {
			types = append(types, t)
		}
	}
	return types
}
