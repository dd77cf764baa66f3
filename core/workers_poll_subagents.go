package core

import (
	"slices"

	"github.com/asyncagents/asyncagents/core/ocevents"
)

// A polled task's subagents' spending (docs/rationale/workers_polled.md). A child that runs
// OpenCode's task tool spends through a session of its own, and that spending is the task's, as
// a local child's subagents' is (usage.go). A followed worker's stream tells each of that
// session's messages and steps (workers_trace.go finds whose it is); a polled worker tells
// nothing, so the child's own messages point the way: its task tool's part names the subagent's
// session (state.metadata.sessionId) from the moment the tool runs. While the part runs, the
// subagent's newest messages are read with the child's progress; once the part has ended, the
// subagent's whole conversation is read once, so one that ran between two reads is counted too.
// A subagent's own subagents are found the same way in its messages. Message IDs and usage marks
// keep a message read again from counting twice. A read that comes back after the task ended
// still counts (the record gets the final figures), but no budget stops an ended task; a read
// that failed is asked again with the task's next progress read, so not once the task has ended.

// maxPolledSubs bounds the subagent sessions followed for one task.
const maxPolledSubs = 32

// polledSub is what the machine knows of one subagent session of a polled task.
type polledSub struct {
	running bool // its task part was last seen running
	final   bool // its whole conversation was read after its part ended
	asked   bool // a read of it is out
}

// notePolledSubs takes the task tool parts in a read of session (t's child, or one of its
// subagents): a new subagent is recorded below session and read at once, and one whose part
// ended is read whole.
func (m *Machine) notePolledSubs(t *run, session string, msgs []message) {
	for _, msg := range msgs {
		if msg.Info.Role != "assistant" {
			continue
		}
		for _, p := range msg.Parts {
			sub := p.State.Metadata.SessionID
			if p.Tool != "task" || sub == "" || sub == t.SessionID || sub == session {
				continue
			}
			s := t.polledSubs[sub]
			if s == nil {
				if len(t.polledSubs) >= maxPolledSubs {
					continue
				}
				if t.polledSubs == nil {
					t.polledSubs = map[string]*polledSub{}
				}
				s = &polledSub{}
				t.polledSubs[sub] = s
				m.noteSessionBelow(sub, session)
				defer m.readPolledSub(t, sub, s) // once its part's state is read
			}
			s.running = p.State.Status == "pending" || p.State.Status == "running"
			if !s.running && !s.final && !s.asked {
				m.readPolledSub(t, sub, s)
			}
		}
	}
}

// readPolledSubs, with t's progress read, reads what is due of each of its subagents: a running
// one's newest messages; an ended one's whole conversation, when its last read of it failed.
func (m *Machine) readPolledSubs(t *run) {
	for _, sub := range sortedKeys(t.polledSubs) {
		if s := t.polledSubs[sub]; !s.asked && !s.final {
			m.readPolledSub(t, sub, s)
		}
	}
}

// readPolledSub asks for sub's messages: a running one's newest, an ended one's all.
func (m *Machine) readPolledSub(t *run, sub string, s *polledSub) {
	if s.asked || s.final {
		return
	}
	limit := 0
	if s.running {
		limit = polledProgressMessages
	}
	s.asked = true
	m.request(Effect{Kind: EffectMessages, SessionID: sub, TaskID: t.ID, Limit: limit},
		pending{taskID: t.ID, sub: sub, progress: limit > 0})
}

// onPolledSubMessages counts what a subagent's messages show it spent (its model calls, tokens
// and cost) toward its task, and follows the subagents it ran in turn.
func (m *Machine) onPolledSubMessages(p pending, ev Event) {
	t := m.task(p.taskID)
	if t == nil || t.polledSubs[p.sub] == nil {
		return
	}
	s := t.polledSubs[p.sub]
	s.asked = false
	if !ev.OK {
		m.log("warn", "could not read the messages of subagent session "+p.sub+" of task "+t.ID+": "+ev.Error)
		return
	}
	msgs, err := ocevents.DecodeMessages(ev.Result)
	if err != nil {
		m.log("warn", "unreadable messages of subagent session "+p.sub+" of task "+t.ID+": "+err.Error())
		return
	}
	for _, msg := range msgs {
		if msg.Info.Role != "assistant" || isSummary(msg.Info.Summary) {
			continue
		}
		m.noteUsage(t, p.sub, msg.Info.ID, msg.Info.Usage)
		for _, part := range msg.Parts {
			if part.Type == "step-finish" && part.ID != "" {
				m.onStepFinished(t, p.sub, part.ID, part.Reason)
			}
		}
	}
	if !p.progress && !s.running {
		s.final = true
	}
	m.notePolledSubs(t, p.sub, msgs)
	m.checkSpending(t, false)
	// Its part ended while this read of its newest messages was out (its task may have ended
	// too, and with it the progress reads): its whole conversation is read now.
	if !s.running {
		m.readPolledSub(t, p.sub, s)
	}
}

// sortedKeys are m's keys in order: effects go out in the same order at every run.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
