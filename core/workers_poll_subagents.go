package core

import (
	"maps"
	"slices"

	"github.com/asyncagents/asyncagents/core/ocevents"
	"github.com/asyncagents/asyncagents/core/task"
)

// A polled task's subagents' spending (docs/rationale/workers_polled.md). A child that runs
// OpenCode's task tool spends through a session of its own, and that spending is the task's, as
// a local child's subagents' is (usage.go). A followed worker's stream tells each of that
// session's messages and steps (workers_trace.go finds whose it is); a polled worker tells
// nothing, so the child's own messages point the way: its task tool's part names the subagent's
// session (state.metadata.sessionId) from the moment the tool runs. While it runs, its newest
// messages are read with the child's progress and held to the task's budget; once its part has
// ended, or its own answer has, its whole conversation is read once, so one that ran between two
// reads is counted too (not held to the budget: the child may have answered since, and the
// child's next progress read holds the total to it). A new call of the task tool that continues
// its session has it read again. Its own subagents are found the same way in its messages.
// Message IDs and usage marks keep a message read again from counting twice. A read that comes
// back after the task ended still counts (the record gets the final figures); a read that failed
// is asked again with the task's next progress read or, once the task has ended, at its settle
// timer (workers_poll_settle.go), which also reads whole a subagent still at work when its task
// was stopped.

// maxPolledSubs bounds the subagent sessions followed for one task: one fewer than the usage
// marks its record keeps (one is its child's), so that after a restart none of them counts again
// what an earlier process counted (usage.go).
const maxPolledSubs = task.MaxUsageMarks - 1

// maxPolledSubCalls bounds the task tool calls remembered for one subagent session.
const maxPolledSubCalls = 16

// polledSub is what the machine knows of one subagent session of a polled task.
type polledSub struct {
	calls   []string // the task tool calls seen running it (OpenCode's task tool may continue a session)
	running bool     // it was last seen at work: its part running, and no answer ending its turn
	final   bool     // its whole conversation was read after it ended
	asked   bool     // a read of it is out
}

// notePolledSubs takes the task tool parts in a read of session (t's child, or one of its
// subagents): a new subagent is recorded below session and read at once; one whose part ended
// is read whole; one a new call continues is read again.
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
			// Once its task has ended, a subagent is read whole, whatever its part says yet.
			running := (p.State.Status == "pending" || p.State.Status == "running") && !t.Status.Terminal()
			if p.CallID != "" && !slices.Contains(s.calls, p.CallID) {
				if len(s.calls) >= maxPolledSubCalls {
					s.calls = s.calls[1:]
				}
				s.calls = append(s.calls, p.CallID)
				s.final, s.running = false, running // a call of its own: it works again
				if running {
					m.readPolledSub(t, sub, s)
				}
			} else if !running {
				s.running = false
			}
			if !s.running {
				m.readPolledSub(t, sub, s) // whole, unless it was read whole or a read is out
			}
		}
	}
}

// readPolledSubs, with t's progress read, reads what is due of each of its subagents: a running
// one's newest messages; an ended one's whole conversation, when its last read of it failed.
func (m *Machine) readPolledSubs(t *run) {
	for _, sub := range slices.Sorted(maps.Keys(t.polledSubs)) {
		m.readPolledSub(t, sub, t.polledSubs[sub])
	}
}

// readPolledSub asks for what is due of sub's messages: a running one's newest, an ended one's
// all; nothing while a read of it is out, nor once it was read whole.
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
// and cost) toward its task, and follows the subagents it ran in turn. A running subagent's
// spending is held to the task's budget as its child's own would be; a read after it ended is
// not: the child may have answered since, and its answer is its result (the child's next
// progress read holds the total to the budget while it works).
func (m *Machine) onPolledSubMessages(p pending, ev Event) {
	t := m.task(p.taskID)
	if t == nil || t.polledSubs[p.sub] == nil {
		return
	}
	s := t.polledSubs[p.sub]
	s.asked = false
	if !ev.OK {
		m.log("warn", "could not read the messages of subagent session "+p.sub+" of task "+t.ID+": "+ev.Error)
		if t.Status.Terminal() {
			m.armSettle(t) // no progress read will ask again (workers_poll_settle.go)
		}
		return
	}
	msgs, err := ocevents.DecodeMessages(ev.Result)
	if err != nil {
		m.log("warn", "unreadable messages of subagent session "+p.sub+" of task "+t.ID+": "+err.Error())
		return
	}
	t.countOnly = !p.progress // read whole, it is not held to the budget (above)
	defer func() { t.countOnly = false }()
	for _, msg := range msgs {
		if msg.Info.Role != "assistant" {
			continue
		}
		m.noteUsage(t, p.sub, msg.Info.ID, msg.Info.Usage)
		for _, part := range msg.Parts {
			if part.Type == "step-finish" && part.ID != "" {
				m.onStepFinished(t, p.sub, part.ID, "") // a subagent's call: its task's turn goes on
			}
		}
	}
	if p.progress && outcomeOf(msgs, 0).done {
		s.running = false // its answer ended its turn, whatever its part says yet
	}
	if s.running {
		m.checkSpending(t, false)
	}
	if !p.progress && !s.running {
		if t.Status.Terminal() && turnOpen(msgs) {
			m.armSettle(t) // its task's abort has not reached it yet: read it whole again then
		} else {
			s.final = true
		}
	}
	m.notePolledSubs(t, p.sub, msgs)
	// It ended while this read of its newest messages was out, or this read shows it (its task
	// may have ended too, and with it the progress reads): its whole conversation is read now.
	if p.progress && !s.running {
		m.readPolledSub(t, p.sub, s)
	}
}
