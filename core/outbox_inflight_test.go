package core

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

// restoredOutbox restores a machine owing ses_a the notice of bg_a1 (of batch m_a when alone,
// else of m_ses_a with the running tasks), and with running tasks bg_<id> of ses_a's batch
// m_ses_a; it answers the parent's read and returns the machine, the first notice message and
// the status read of the running tasks.
func restoredOutbox(t *testing.T, alone bool, running ...string) (*Machine, Effect, Effect) {
	batch := "m_ses_a"
	if alone {
		batch = "m_a"
	}
	log := HistoryLine(task.Task{ID: "bg_a1", SessionID: "ses_a1", ParentSessionID: "ses_a", ParentMessageID: batch, ParentAgent: "build",
		BatchID: batch, Description: "a1", Prompt: "do", Agent: "general", Status: task.StatusCompleted, NoticeOwed: 2000, StartedAt: 1000,
		CompletedAt: 2000, Result: "r", Progress: task.Progress{LastTools: []string{}}, Depth: 1})
	for _, id := range running {
		log += HistoryLine(task.Task{ID: "bg_" + id, SessionID: "ses_" + id, ParentSessionID: "ses_a", ParentMessageID: "m_ses_a", ParentAgent: "build",
			BatchID: "m_ses_a", Description: id, Prompt: "do", Agent: "general", Status: task.StatusRunning, StartedAt: 1000,
			Progress: task.Progress{LastTools: []string{}}, Depth: 1})
	}
	m := NewMachine(config.Config{})
	_, effects := m.Restore(5000, log)
	read := ofKind(effects, EffectMessages)
	require.Len(t, read, 1)
	status := ofKind(effects, EffectStatus)
	require.Len(t, status, 1)
	out := m.Step(5050, Event{Type: EventEffectDone, EffectID: read[0].ID, OK: true, Result: json.RawMessage(`[]`)})
	first := ofKind(out, EffectPromptAsync)
	require.Len(t, first, 1)
	return m, first[0], status[0]
}

// finishChildren has the status read find the running tasks idle and returns the messages read of
// their children.
func finishChildren(t *testing.T, m *Machine, status Effect, n int) []Effect {
	out := m.Step(5100, Event{Type: EventEffectDone, EffectID: status.ID, OK: true, Result: json.RawMessage(`{}`)})
	reads := ofKind(out, EffectMessages)
	require.Len(t, reads, n)
	return reads
}

// answerParentRead answers the read of ses_a's messages that comes before a notice of a restored
// task found ended (checkBeforeTelling), when there is one, and returns what follows.
func answerParentRead(m *Machine, out []Effect, at int64) []Effect {
	for _, e := range ofKind(out, EffectMessages) {
		if e.SessionID == "ses_a" {
			return append(out, m.Step(at, Event{Type: EventEffectDone, EffectID: e.ID, OK: true, Result: json.RawMessage(`[]`)})...)
		}
	}
	return out
}

var childDone = json.RawMessage(`[{"info":{"id":"a","role":"assistant","finish":"stop","time":{"created":1,"completed":2}},"parts":[{"type":"text","text":"done"}]}]`)

// While a message that wakes the parent is with OpenCode, nothing else goes to that parent: a
// line sent beside it could reach OpenCode after it and land in the turn it starts.
func TestNothingGoesBesideAWakingNotice(t *testing.T) {
	m, first, status := restoredOutbox(t, true, "r1", "r2")
	require.False(t, first.NoReply, "a1's batch is done: its notice wakes the parent")
	reads := finishChildren(t, m, status, 2)
	out := answerParentRead(m, m.Step(5200, Event{Type: EventEffectDone, EffectID: reads[0].ID, OK: true, Result: childDone}), 5210)
	require.Empty(t, ofKind(out, EffectPromptAsync), "the waking message is in flight: the next waits")
	out = answerParentRead(m, m.Step(5300, Event{Type: EventEffectDone, EffectID: first.ID, OK: true}), 5310)
	require.Len(t, ofKind(out, EffectPromptAsync), 1, "it goes once the waking one is answered")
}

// Each message keeps its own count of refusals: another one's acceptance meanwhile does not
// start its backoff over.
func TestAnotherNoticesAcceptanceKeepsTheTries(t *testing.T) {
	m, first, status := restoredOutbox(t, false, "r1", "r2")
	reads := finishChildren(t, m, status, 2)
	out := answerParentRead(m, m.Step(5200, Event{Type: EventEffectDone, EffectID: reads[0].ID, OK: true, Result: childDone}), 5210)
	second := ofKind(out, EffectPromptAsync)
	require.Len(t, second, 1, "two in flight")

	retryDelay := func(out []Effect) int64 {
		for _, e := range ofKind(out, EffectTimerSet) {
			if e.TimerID == noticeRetryPrefix+"ses_a" {
				return e.DelayMs
			}
		}
		return 0
	}
	out = m.Step(5300, Event{Type: EventEffectDone, EffectID: first.ID, OK: false, Error: "timeout"})
	require.Equal(t, int64(1000), retryDelay(out), "the first refusal")
	m.Step(5400, Event{Type: EventEffectDone, EffectID: second[0].ID, OK: true})
	out = m.Step(6300, Event{Type: EventTimer, TimerID: noticeRetryPrefix + "ses_a"})
	check := ofKind(out, EffectMessages)
	require.Len(t, check, 1, "the retry reads the parent's messages first")
	out = m.Step(6400, Event{Type: EventEffectDone, EffectID: check[0].ID, OK: true, Result: json.RawMessage(`[]`)})
	again := ofKind(out, EffectPromptAsync)
	require.Len(t, again, 1)
	require.Equal(t, "bg_a1", again[0].TaskID)
	out = m.Step(6500, Event{Type: EventEffectDone, EffectID: again[0].ID, OK: false, Error: "timeout"})
	require.Equal(t, int64(2000), retryDelay(out), "its second refusal in a row, whatever the other message did")
}

// A message OpenCode refused noticeMaxTries times is given up alone: a notice that joined it
// later, with fewer refusals of its own, stays in the outbox with its count and is delivered by
// its next try.
func TestGivingUpOneNoticeKeepsTheOthers(t *testing.T) {
	m, first, status := restoredOutbox(t, false, "r1", "r2", "r3")
	reads := finishChildren(t, m, status, 3)
	now := int64(5200)
	step := func(ev Event) []Effect {
		now += 10
		return m.Step(now, ev)
	}
	second := ofKind(answerParentRead(m, step(Event{Type: EventEffectDone, EffectID: reads[0].ID, OK: true, Result: childDone}), now+5), EffectPromptAsync)
	require.Len(t, second, 1)
	require.Empty(t, ofKind(answerParentRead(m, step(Event{Type: EventEffectDone, EffectID: reads[1].ID, OK: true, Result: childDone}), now+5), EffectPromptAsync), "two in flight: r2's waits")

	out := step(Event{Type: EventEffectDone, EffectID: first.ID, OK: false, Error: "timeout"})
	gaveUp := false
	for i := 0; i < 3*noticeMaxTries && !gaveUp; i++ {
		require.NotEmpty(t, ofKind(out, EffectTimerSet), "a retry is armed")
		check := ofKind(step(Event{Type: EventTimer, TimerID: noticeRetryPrefix + "ses_a"}), EffectMessages)
		require.Len(t, check, 1)
		sent := ofKind(step(Event{Type: EventEffectDone, EffectID: check[0].ID, OK: true, Result: json.RawMessage(`[]`)}), EffectPromptAsync)
		require.Len(t, sent, 1)
		out = step(Event{Type: EventEffectDone, EffectID: sent[0].ID, OK: false, Error: "timeout"})
		for _, e := range ofKind(out, EffectLog) {
			gaveUp = gaveUp || e.Level == "error"
		}
	}
	require.True(t, gaveUp, "bg_a1's notice was given up")
	b := m.outbox.Get("ses_a")
	require.NotNil(t, b, "the outbox keeps the rest")
	require.Len(t, b.Queue, 1)
	require.Equal(t, "bg_r2", b.Queue[0].tasks[0].ID)
	require.Equal(t, noticeMaxTries-1, b.Queue[0].tries, "its own count, neither reset nor dropped")

	check := ofKind(step(Event{Type: EventTimer, TimerID: noticeRetryPrefix + "ses_a"}), EffectMessages)
	require.Len(t, check, 1)
	sent := ofKind(step(Event{Type: EventEffectDone, EffectID: check[0].ID, OK: true, Result: json.RawMessage(`[]`)}), EffectPromptAsync)
	require.Len(t, sent, 1)
	require.Equal(t, "bg_r2", sent[0].TaskID)
	step(Event{Type: EventEffectDone, EffectID: sent[0].ID, OK: true})
	tk, _ := m.Task("bg_r2")
	require.Zero(t, tk.NoticeOwed, "delivered")
	a1, _ := m.Task("bg_a1")
	require.NotZero(t, a1.NoticeOwed, "the one given up stays owed for the next start")
}
