package core

import "github.com/asyncagents/asyncagents/core/task"

// messageUsage is what one assistant message of a child spent, as OpenCode last reported it.
type messageUsage struct {
	tokens task.Tokens
	cost   float64
}

// usageJSON is the usage on an OpenCode assistant message (message.updated's info, and the
// messages read from the session).
type usageJSON struct {
	Tokens *struct {
		Input     int64 `json:"input"`
		Output    int64 `json:"output"`
		Reasoning int64 `json:"reasoning"`
		Cache     struct {
			Read  int64 `json:"read"`
			Write int64 `json:"write"`
		} `json:"cache"`
	} `json:"tokens"`
	Cost float64 `json:"cost"`
}

// noteUsage records what the child's assistant message id spent. A message's figures grow as it
// streams and message.updated repeats them, so each message counts once, with its latest
// figures: the task's totals take the message's earlier count away and add the new one. Every
// message counts, those of attempts the fallback loop left and of earlier runs (resumes add to
// the totals) alike: their tokens were spent. What the machine knows of each message is not
// persisted: a task still at work across a restart may count a message it saw before again.
func (m *Machine) noteUsage(t *run, id string, u usageJSON) {
	if id == "" || u.Tokens == nil {
		return
	}
	now := messageUsage{cost: u.Cost, tokens: task.Tokens{Input: u.Tokens.Input, Output: u.Tokens.Output,
		Reasoning: u.Tokens.Reasoning, CacheRead: u.Tokens.Cache.Read, CacheWrite: u.Tokens.Cache.Write}}
	before, seen := t.usage[id]
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
	m.touch(t)
}
