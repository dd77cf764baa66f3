package slots

// Hold holds the starts while stops that end several tasks at once are under way: a slot freed
// meanwhile is owed, and the queue is looked at once, when the last of them is done (a queued
// sibling started at once would be cancelled a moment later with the others).
type Hold struct {
	held int
	owed bool
}

// Begin holds the starts; holds nest.
func (h *Hold) Begin() { h.held++ }

// End ends one hold, and reports whether the queue must be looked at now: the outermost hold
// ended and a slot freed meanwhile.
func (h *Hold) End() bool {
	h.held--
	if h.held == 0 && h.owed {
		h.owed = false
		return true
	}
	return false
}

// Defer reports whether the starts are held now; if so, a look at the queue is owed for when
// they are released.
func (h *Hold) Defer() bool {
	if h.held > 0 {
		h.owed = true
	}
	return h.held > 0
}
