package core

// splitNotices cuts a notice message into one notice per task it tells of (each its visible and
// its synthetic part, as a notice of one task is), for the tests that count notices per task: the
// notices ready together for one parent go as one message (outbox.go).
func splitNotices(e Effect) []Effect {
	ids := e.TaskIDs
	if len(ids) == 0 {
		ids = []string{e.TaskID}
	}
	out := make([]Effect, 0, len(ids))
	for i, id := range ids {
		n := e
		n.TaskID, n.TaskIDs = id, nil
		n.Parts = e.Parts[2*i : 2*i+2]
		out = append(out, n)
	}
	return out
}
