package core

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

// A notice OpenCode keeps refusing is tried again after 1 s, then twice as long each time up to a
// minute, ten tries in all; then the process gives up on it, but the history still owes it, and
// the next start delivers it once.
func TestRefusedNoticeBacksOffAndStaysOwed(t *testing.T) {
	w, _ := crashScenario{tasks: 1, refuse: 1000}.play(t, -1)
	require.Equal(t, []int64{1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000}, w.retries)
	require.Contains(t, w.logs[len(w.logs)-1], "error: could not deliver the notice of task "+w.m.order[0])
	require.Contains(t, w.logs[len(w.logs)-1], "gave up after 10 tries")
	id := w.m.order[0]
	require.Zero(t, w.noticesOf(id))
	tk, _ := w.m.Task(id)
	require.NotZero(t, tk.NoticeOwed, "still owed")

	w.refuse = 0
	w.restart()
	w.settle(-1)
	require.Equal(t, 1, w.noticesOf(id), "the next start delivers it")
	tk, _ = w.m.Task(id)
	require.Zero(t, tk.NoticeOwed)
}

// The notices ready for one parent when a step ends go as one message: a batch's notices held
// while the parent was busy and the last one, which wakes it.
func TestNoticesReadyTogetherGoAsOneMessage(t *testing.T) {
	w, _ := crashScenario{tasks: 3, parentBusy: true}.play(t, -1)
	require.Len(t, w.parent, 1, "one message for the three notices")
	for _, id := range w.m.order {
		require.Equal(t, 1, w.noticesOf(id))
		require.True(t, w.wokeBy[id], "the message wakes the parent: the batch is done")
	}
}

// A restore reads each parent's messages once, whatever it owes it; a notice that falls due for
// a parent while its messages are being read waits for the read, then goes with the restored ones.
func TestRestoreReadsEachParentOnceAndNewNoticesWait(t *testing.T) {
	owed := func(id, parent string, status task.Status) string {
		return HistoryLine(task.Task{ID: id, SessionID: "ses_" + id, ParentSessionID: parent, ParentMessageID: "m_" + parent, ParentAgent: "build",
			BatchID: "m_" + parent, Description: id, Prompt: "do", Agent: "general", Status: status, NoticeOwed: 2000, StartedAt: 1000,
			CompletedAt: 2000, Result: "r", Progress: task.Progress{LastTools: []string{}}, Depth: 1})
	}
	running := HistoryLine(task.Task{ID: "bg_run", SessionID: "ses_run", ParentSessionID: "ses_a", ParentMessageID: "m_ses_a", ParentAgent: "build",
		BatchID: "m_ses_a", Description: "run", Prompt: "do", Agent: "general", Status: task.StatusRunning, StartedAt: 1000,
		Progress: task.Progress{LastTools: []string{}}, Depth: 1})
	m := NewMachine(config.Config{})
	_, effects := m.Restore(5000, owed("bg_a1", "ses_a", task.StatusCompleted)+owed("bg_a2", "ses_a", task.StatusError)+owed("bg_b1", "ses_b", task.StatusCompleted)+running)
	reads := ofKind(effects, EffectMessages)
	require.Len(t, reads, 2, "one read per parent")
	require.Equal(t, []string{"ses_a", "ses_b"}, []string{reads[0].SessionID, reads[1].SessionID})
	status := ofKind(effects, EffectStatus)
	require.Len(t, status, 1, "the running task is reconciled")

	// The running task turns out finished while ses_a's messages are still being read.
	out := m.Step(5100, Event{Type: EventEffectDone, EffectID: status[0].ID, OK: true, Result: json.RawMessage(`{}`)})
	childRead := ofKind(out, EffectMessages)
	require.Len(t, childRead, 1)
	out = m.Step(5200, Event{Type: EventEffectDone, EffectID: childRead[0].ID, OK: true,
		Result: json.RawMessage(`[{"info":{"id":"a","role":"assistant","finish":"stop","time":{"created":1,"completed":2}},"parts":[{"type":"text","text":"done"}]}]`)})
	require.Empty(t, ofKind(out, EffectPromptAsync), "ses_a's outbox waits for its read")

	out = m.Step(5300, Event{Type: EventEffectDone, EffectID: reads[0].ID, OK: true, Result: json.RawMessage(`[]`)})
	sent := ofKind(out, EffectPromptAsync)
	require.Len(t, sent, 1, "one message for ses_a")
	require.Equal(t, "ses_a", sent[0].SessionID)
	require.Equal(t, []string{"bg_a1", "bg_a2", "bg_run"}, sent[0].TaskIDs)
	require.Len(t, sent[0].Parts, 6)
	require.False(t, sent[0].NoReply, "a failure and the batch's end wake the parent")
}

// A notice that falls due while another to the same parent is still with OpenCode waits for
// OpenCode's answer, then goes with whatever else fell due meanwhile, as one message: one request
// in flight per parent, so a busy OpenCode makes it wait once, not once per notice.
func TestNoticeWaitsForTheOneInFlight(t *testing.T) {
	owed := HistoryLine(task.Task{ID: "bg_a1", SessionID: "ses_a1", ParentSessionID: "ses_a", ParentMessageID: "m_ses_a", ParentAgent: "build",
		BatchID: "m_ses_a", Description: "a1", Prompt: "do", Agent: "general", Status: task.StatusCompleted, NoticeOwed: 2000, StartedAt: 1000,
		CompletedAt: 2000, Result: "r", Progress: task.Progress{LastTools: []string{}}, Depth: 1})
	runningLine := func(id string) string {
		return HistoryLine(task.Task{ID: "bg_" + id, SessionID: "ses_" + id, ParentSessionID: "ses_a", ParentMessageID: "m_ses_a", ParentAgent: "build",
			BatchID: "m_ses_a", Description: id, Prompt: "do", Agent: "general", Status: task.StatusRunning, StartedAt: 1000,
			Progress: task.Progress{LastTools: []string{}}, Depth: 1})
	}
	m := NewMachine(config.Config{})
	_, effects := m.Restore(5000, owed+runningLine("r1")+runningLine("r2"))
	read := ofKind(effects, EffectMessages)
	require.Len(t, read, 1)
	status := ofKind(effects, EffectStatus)
	require.Len(t, status, 1)
	out := m.Step(5050, Event{Type: EventEffectDone, EffectID: read[0].ID, OK: true, Result: json.RawMessage(`[]`)})
	first := ofKind(out, EffectPromptAsync)
	require.Len(t, first, 1, "the restored notice goes")
	require.Equal(t, "bg_a1", first[0].TaskID)

	// Both running tasks turn out finished while that notice is with OpenCode.
	out = m.Step(5100, Event{Type: EventEffectDone, EffectID: status[0].ID, OK: true, Result: json.RawMessage(`{}`)})
	reads := ofKind(out, EffectMessages)
	require.Len(t, reads, 2)
	answer := json.RawMessage(`[{"info":{"id":"a","role":"assistant","finish":"stop","time":{"created":1,"completed":2}},"parts":[{"type":"text","text":"done"}]}]`)
	// A restored task found ended may have been told of by a process that could not record it:
	// the parent's messages are read first (checkBeforeTelling).
	parentRead := func(out []Effect, at int64) []Effect {
		read := ofKind(out, EffectMessages)
		require.Len(t, read, 1, "the parent's messages are read before the notice")
		require.Equal(t, "ses_a", read[0].SessionID)
		return m.Step(at, Event{Type: EventEffectDone, EffectID: read[0].ID, OK: true, Result: json.RawMessage(`[]`)})
	}
	out = parentRead(m.Step(5200, Event{Type: EventEffectDone, EffectID: reads[0].ID, OK: true, Result: answer}), 5210)
	second := ofKind(out, EffectPromptAsync)
	require.Len(t, second, 1, "a second message may be with OpenCode beside the first")
	out = m.Step(5250, Event{Type: EventEffectDone, EffectID: reads[1].ID, OK: true, Result: answer})
	require.Empty(t, ofKind(out, EffectPromptAsync), "two in flight per parent at most: the third waits")

	// OpenCode accepts the first. The third ends the batch and wakes the parent: it goes last,
	// once the second is answered too, so that no line lands in the turn it starts.
	out = parentRead(m.Step(5300, Event{Type: EventEffectDone, EffectID: first[0].ID, OK: true}), 5310)
	require.Empty(t, ofKind(out, EffectPromptAsync), "the waking message waits for the one still in flight")
	tk, _ := m.Task("bg_a1")
	require.Zero(t, tk.NoticeOwed)
	out = m.Step(5400, Event{Type: EventEffectDone, EffectID: second[0].ID, OK: true})
	third := ofKind(out, EffectPromptAsync)
	require.Len(t, third, 1, "what fell due meanwhile goes when the answers came")
	require.NotEqual(t, second[0].TaskID, third[0].TaskID)
	require.False(t, third[0].NoReply)
	out = m.Step(5450, Event{Type: EventEffectDone, EffectID: third[0].ID, OK: true})
	require.Empty(t, ofKind(out, EffectPromptAsync))
	for _, id := range []string{"bg_r1", "bg_r2"} {
		tk, _ = m.Task(id)
		require.Zero(t, tk.NoticeOwed, id)
	}
	require.Zero(t, m.outbox.Len(), "nothing left in the outbox")
}

// A child's end frees its slot, and the same step starts the next queued child; its notice goes
// ahead of that child's session, since OpenCode starts on requests in the order they come.
func TestANoticeGoesAheadOfTheNextQueuedStart(t *testing.T) {
	h := newFB(t, config.Config{MaxConcurrentStarts: 1})
	a := h.launchFrom("ses_p", "A")
	q := h.launchFrom("ses_p", "Q")
	require.True(t, h.m.task(q).Queued)
	h.idleParent()
	child := h.m.task(a).SessionID
	h.oc("message.part.updated", `{"part":{"id":"prt_1","sessionID":"`+child+`","messageID":"msg_1","type":"text","text":"done","time":{"end":5}}}`)
	h.now += 10
	out := h.m.Step(h.now, Event{Type: EventOpenCode, Event: &OpenCodeEvent{Type: "message.updated",
		Properties: json.RawMessage(`{"info":{"id":"msg_1","sessionID":"` + child + `","role":"assistant","finish":"stop","time":{"created":1,"completed":6}}}`)}})
	require.Equal(t, task.StatusCompleted, h.status(a))
	notice, start, lines := -1, -1, -1
	for i, e := range out {
		switch {
		case e.Kind == EffectPromptAsync && e.Notice:
			notice = i
		case e.Kind == EffectSessionCreate:
			start = i
		case e.Kind == EffectHistoryAppend:
			lines = i
		}
	}
	require.GreaterOrEqual(t, notice, 0, "A's notice went")
	require.Less(t, lines, notice, "the history lines (the notice is owed) come first of all")
	require.Greater(t, start, notice, "Q's session is created after A's notice is sent")
}

// A parent deleted while OpenCode was down: the restore's read of its messages answers that the
// session is not found, so its tasks are forgotten, as on session.deleted, and no retry is armed
// (every start would otherwise try again). Another parent's notice goes as usual.
func TestANoticeToADeletedParentIsDropped(t *testing.T) {
	owed := func(id, parent string) string {
		return HistoryLine(task.Task{ID: id, SessionID: "ses_" + id, ParentSessionID: parent, ParentMessageID: "m_" + parent, ParentAgent: "build",
			BatchID: "m_" + parent, Description: id, Prompt: "do", Agent: "general", Status: task.StatusCompleted, NoticeOwed: 2000, StartedAt: 1000,
			CompletedAt: 2000, Result: "r", Progress: task.Progress{LastTools: []string{}}, Depth: 1})
	}
	m := NewMachine(config.Config{})
	_, effects := m.Restore(5000, owed("bg_gone", "ses_gone")+owed("bg_here", "ses_here"))
	reads := ofKind(effects, EffectMessages)
	require.Len(t, reads, 2)
	require.Equal(t, "ses_gone", reads[0].SessionID)

	out := m.Step(5100, Event{Type: EventEffectDone, EffectID: reads[0].ID, Error: "reading the messages: Session not found: ses_gone"})
	_, known := m.Task("bg_gone")
	require.False(t, known, "the deleted parent's task is forgotten")
	require.Empty(t, ofKind(out, EffectPromptAsync))
	require.Empty(t, ofKind(out, EffectTimerSet), "no retry")
	require.Len(t, ofKind(out, EffectHistoryAppend), 1, "the history says it is gone")
	require.Nil(t, m.outbox.Get("ses_gone"))

	out = m.Step(5200, Event{Type: EventEffectDone, EffectID: reads[1].ID, OK: true, Result: json.RawMessage(`[]`)})
	sent := ofKind(out, EffectPromptAsync)
	require.Len(t, sent, 1)
	require.Equal(t, "ses_here", sent[0].SessionID)

	// A live notice refused the same way: the parent went while its task ran.
	out = m.Step(5300, Event{Type: EventEffectDone, EffectID: sent[0].ID, Error: "prompting the session: Session not found: ses_here"})
	_, known = m.Task("bg_here")
	require.False(t, known)
	require.Empty(t, ofKind(out, EffectTimerSet))

	// Any other failure is retried, as before.
	m2 := NewMachine(config.Config{})
	_, effects = m2.Restore(5000, owed("bg_x", "ses_x"))
	out = m2.Step(5100, Event{Type: EventEffectDone, EffectID: ofKind(effects, EffectMessages)[0].ID, Error: "reading the messages: Session not found: ses_other"})
	_, known = m2.Task("bg_x")
	require.True(t, known, "another session's name in the error proves nothing about this one")
	require.Len(t, ofKind(out, EffectTimerSet), 1, "retried")
}
