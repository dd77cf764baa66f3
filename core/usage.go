package core

import (
	"github.com/asyncagents/asyncagents/core/ocevents"
	"github.com/asyncagents/asyncagents/core/task"
)

// messageUsage is what one assistant message of a child spent, as OpenCode last reported it.
type messageUsage struct {
	tokens task.Tokens
	cost   float64
}

// noteUsage records what the child's assistant message id spent. A message's figures grow as it
// streams and message.updated repeats them, so each message counts once, with its latest
// figures: the task's totals take the message's earlier count away and add the new one. Every
// message counts, those of attempts the fallback loop left and of earlier runs (resumes add to
// the totals) alike: their tokens were spent, and so are those of the subagents the child runs
// through OpenCode's task tool (session is where the message is). The record keeps, per session,
// the latest message counted and its figures (task.UsageMark): after a restart a message up to it
// is not counted again, and the latest one replaces the figures counted for it.
func (m *Machine) noteUsage(t *run, session, id string, u ocevents.Usage) {
	if id == "" || u.Tokens == nil {
		return
	}
	now := messageUsage{cost: u.Cost, tokens: task.Tokens{Input: u.Tokens.Input, Output: u.Tokens.Output,
		Reasoning: u.Tokens.Reasoning, CacheRead: u.Tokens.Cache.Read, CacheWrite: u.Tokens.Cache.Write}}
	before, seen := t.usage[id]
	mark := t.UsageMark(session)
	if prior := t.countedBefore(session); !seen && prior.Message != "" {
		switch {
		case id < prior.Message:
			return // counted before a restart, complete since a later message began
		case id == prior.Message:
			before, seen = messageUsage{tokens: prior.Tokens, cost: prior.Cost}, true
		}
	}
	if seen && before == now {
		return
	}
	if t.usage == nil {
		t.usage = map[string]messageUsage{}
	}
	t.usage[id] = now
	if seen {
		t.AddUsage(before.tokens, before.cost, true)
	}
	t.AddUsage(now.tokens, now.cost, false)
	if id >= mark.Message {
		mark.Message, mark.Tokens, mark.Cost = id, now.tokens, now.cost
		t.setUsageMark(mark)
	}
	m.touchProgress(t)
}

// countedBefore is session's mark as this process first found it for t: what an earlier process
// counted (none, for a task this one launched). Only what is up to it may have been counted
// already; anything else not seen here is new, even below the mark as it stands now: a read of a
// session's newest messages moves the mark past messages that a later read of all of them shows
// for the first time (workers_poll_progress.go, workers_poll_subagents.go). A task restored with
// spending counted but no mark for its child's session (a record older than the marks, or one
// whose marks went to 16 subagents) cannot say what was counted there: the mark as it stands now
// keeps its earlier messages from counting again, as it always did.
func (t *run) countedBefore(session string) task.UsageMark {
	if t.marksAtStart == nil {
		t.marksAtStart = append([]task.UsageMark{}, t.UsageMarks...)
		tok, cost := t.Usage()
		t.spentAtStart = tok.Total() > 0 || cost > 0 || t.Steps > 0
	}
	for _, k := range t.marksAtStart {
		if k.Session == session {
			return k
		}
	}
	if t.spentAtStart && session == t.SessionID {
		return t.UsageMark(session)
	}
	return task.UsageMark{Session: session}
}

// setUsageMark records how far t's spending in session is counted, keeping task.MaxUsageMarks
// sessions at most.
func (t *run) setUsageMark(mark task.UsageMark) {
	if mark.Session == "" {
		return
	}
	for i := range t.UsageMarks {
		if t.UsageMarks[i].Session == mark.Session {
			t.UsageMarks[i] = mark
			return
		}
	}
	if len(t.UsageMarks) >= task.MaxUsageMarks {
		oldest := 0
		for i, k := range t.UsageMarks {
			if k.Message < t.UsageMarks[oldest].Message {
				oldest = i
			}
		}
		t.UsageMarks = append(t.UsageMarks[:oldest], t.UsageMarks[oldest+1:]...)
	}
	t.UsageMarks = append(t.UsageMarks, mark)
}
