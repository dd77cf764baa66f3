package core

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
type FollowRule struct {
	BatchMs  int               `json:"batchMs"`
	Defer    []string          `json:"defer"`
	Coalesce map[string]string `json:"coalesce"`
}

// workerFollowRule: progress waits a quarter of a second (the TUI and the dashboard show no
// finer); a child's end, error, permission request or deletion goes at once, so a notice or a
// question is not held up. session.status waits too: a child's idle status is followed by
// session.idle, which does not wait.
var workerFollowRule = FollowRule{
	BatchMs: 250,
	Defer:   []string{"message.part.updated", "message.updated", "session.updated", "session.status"},
	Coalesce: map[string]string{
		"message.part.updated": "part.id",
		"message.updated":      "info.id",
		"session.updated":      "info.id",
	},
}
