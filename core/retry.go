package core

import (
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/core/text"
	"github.com/asyncagents/asyncagents/core/view"
)

// A provider that keeps failing must not look healthy. OpenCode retries a child's model call on
// a 429 or 5xx by itself, for a minute or more, and says so only in session.status ("retry":
// the attempt, the error, the next try). The task keeps the latest retry (task.Retry) while the
// child has nothing else to show, so every place that shows the task can say it is retrying
// (core/view: the rows' note, the dashboard's view; the tools' answers below).

// noteRetry records OpenCode's retry r of t's model call, unless the fallback loop has just
// left the attempt for the next model (then nothing is retried).
func (m *Machine) noteRetry(t *run, r task.Retry) {
	if t.Status.Terminal() || t.pendingErr != nil {
		return
	}
	if t.Retry != nil && *t.Retry == r {
		return
	}
	t.Retry = &r
	m.touch(t)
}

// clearRetry ends the retry shown for t: its child did something, or went idle.
func (m *Machine) clearRetry(t *run) {
	if t.Retry == nil {
		return
	}
	t.Retry = nil
	m.touch(t)
}

// retryText is t's retry for the tools' answers: the view's words and when the next try goes
// ("retrying (attempt 3): HTTP 500 …, next try in 8.0s"), "" when OpenCode is not retrying.
func (m *Machine) retryText(t *run) string {
	r := view.HoldOf(&t.Task).Retry
	if r == nil {
		return ""
	}
	s := view.Retrying(r)
	if r.Next > m.now {
		s += ", next try in " + text.Duration(r.Next-m.now)
	}
	return s
}
