package core

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

// unboundLine is the history of a task launched whose session was being made: at work, no
// session, not queued.
func unboundLine() string {
	return HistoryLine(task.Task{ID: "bg_lost", ParentSessionID: "ses_p", ParentMessageID: "m_p", ParentAgent: "build",
		BatchID: "m_p", Description: "filler", Prompt: "do", Agent: "general", Status: task.StatusRunning, StartedAt: 1000,
		Progress: task.Progress{LastTools: []string{}}, Depth: 1})
}

// restoreUnbound restores unboundLine and returns the machine and its one children read.
func restoreUnbound(t *testing.T) (*Machine, Effect) {
	m := NewMachine(config.Config{})
	_, effects := m.Restore(9000, unboundLine())
	require.Empty(t, ofKind(effects, EffectSessionCreate), "no session is made before the children are read")
	look := ofKind(effects, EffectSessionChildren)
	require.Len(t, look, 1)
	require.Equal(t, "ses_p", look[0].SessionID)
	require.Equal(t, "bg_lost", look[0].TaskID)
	return m, look[0]
}

const childrenNamingIt = `[{"id":"ses_other","parentID":"ses_p","metadata":{"asyncagents":{"task":"bg_else"}}},{"id":"ses_old","parentID":"ses_p"},` +
	`{"id":"ses_lost","parentID":"ses_p","metadata":{"asyncagents":{"task":"bg_lost"}}}]`

// The record binding a task to its child never reached the history: the restart finds the child
// that names the task among its parent's children and adopts it, makes none, and the task ends
// as the child's messages say. Its parent, told before the restart, is not told twice; never
// told, it is told once.
func TestAnUnboundTaskAdoptsTheChildThatNamesIt(t *testing.T) {
	for _, told := range []bool{true, false} {
		m, look := restoreUnbound(t)
		out := m.Step(9100, Event{Type: EventEffectDone, EffectID: look.ID, OK: true, Result: json.RawMessage(childrenNamingIt)})
		require.Empty(t, ofKind(out, EffectSessionCreate))
		got, _ := m.Task("bg_lost")
		require.Equal(t, "ses_lost", got.SessionID)
		lines := ofKind(out, EffectHistoryAppend)
		require.NotEmpty(t, lines)
		require.Contains(t, lines[0].Line, `"sessionID":"ses_lost"`, "the adoption is recorded")
		status := ofKind(out, EffectStatus)
		require.Len(t, status, 1)
		out = m.Step(9200, Event{Type: EventEffectDone, EffectID: status[0].ID, OK: true, Result: json.RawMessage(`{}`)})
		child := ofKind(out, EffectMessages)
		require.Len(t, child, 1)
		require.Equal(t, "ses_lost", child[0].SessionID)
		out = m.Step(9300, Event{Type: EventEffectDone, EffectID: child[0].ID, OK: true,
			Result: json.RawMessage(`[{"info":{"id":"u","role":"user","time":{"created":1100}},"parts":[]},` +
				`{"info":{"id":"a","role":"assistant","finish":"stop","time":{"created":1500,"completed":2000}},"parts":[{"type":"text","text":"done"}]}]`)})
		got, _ = m.Task("bg_lost")
		require.Equal(t, task.StatusCompleted, got.Status)
		require.Equal(t, "done", got.Result)
		toldOnce(t, m, out, 9400, "bg_lost", told)
	}
}

// An adopted child still busy goes on being tracked; one OpenCode made but never prompted (the
// stop came first) gets the task's prompt.
func TestAnAdoptedChildBusyOrNeverPrompted(t *testing.T) {
	for _, tc := range []struct {
		busy, msgs string
		prompted   bool
	}{
		{`{"ses_lost":{"type":"busy"}}`, `[{"info":{"id":"u","role":"user","time":{"created":1100}},"parts":[]}]`, false},
		{`{}`, `[]`, true},
	} {
		m, look := restoreUnbound(t)
		out := m.Step(9100, Event{Type: EventEffectDone, EffectID: look.ID, OK: true, Result: json.RawMessage(childrenNamingIt)})
		out = m.Step(9200, Event{Type: EventEffectDone, EffectID: ofKind(out, EffectStatus)[0].ID, OK: true, Result: json.RawMessage(tc.busy)})
		out = m.Step(9300, Event{Type: EventEffectDone, EffectID: ofKind(out, EffectMessages)[0].ID, OK: true, Result: json.RawMessage(tc.msgs)})
		got, _ := m.Task("bg_lost")
		require.Equal(t, task.StatusRunning, got.Status, tc.msgs)
		p := prompts(out, "ses_lost")
		if tc.prompted {
			require.Len(t, p, 1)
			require.Equal(t, "do", p[0].Parts[0].Text)
		} else {
			require.Empty(t, p)
		}
		require.Empty(t, ofKind(out, EffectSessionCreate))
	}
}

// No child names the task: its session is made, as at a launch, with the metadata naming it.
func TestAnUnboundTaskNoChildNamesIsMadeItsSession(t *testing.T) {
	for _, children := range []string{`[]`, `[{"id":"ses_other","parentID":"ses_p","metadata":{"asyncagents":{"task":"bg_else"}}},{"id":"ses_x","parentID":"ses_p","metadata":{"other":1}}]`,
		`[{"id":"ses_elsewhere","parentID":"ses_q","metadata":{"asyncagents":{"task":"bg_lost"}}}]`} {
		m, look := restoreUnbound(t)
		out := m.Step(9100, Event{Type: EventEffectDone, EffectID: look.ID, OK: true, Result: json.RawMessage(children)})
		create := ofKind(out, EffectSessionCreate)
		require.Len(t, create, 1, children)
		require.Equal(t, map[string]any{"asyncagents": map[string]any{"task": "bg_lost"}}, create[0].Metadata)
	}
}

// A children read that fails is asked again, a second apart; once it failed every time, the
// task's session is made anyway, and the log says why. One that answers on a retry adopts.
func TestAChildrenReadThatFailsIsAskedAgainThenMakesTheSession(t *testing.T) {
	m, look := restoreUnbound(t)
	now := int64(9000)
	var out []Effect
	for try := 0; try <= childrenRetries; try++ {
		now += 100
		out = m.Step(now, Event{Type: EventEffectDone, EffectID: look.ID, OK: false, Error: "connection refused"})
		if try == childrenRetries {
			break
		}
		require.Empty(t, ofKind(out, EffectSessionCreate), "try %d", try)
		timer := ofKind(out, EffectTimerSet)
		require.Len(t, timer, 1)
		require.Equal(t, childrenTimerPrefix+"bg_lost", timer[0].TimerID)
		require.EqualValues(t, childrenRetryMs, timer[0].DelayMs)
		now += childrenRetryMs
		out = m.Step(now, Event{Type: EventTimer, TimerID: timer[0].TimerID})
		look = ofKind(out, EffectSessionChildren)[0]
	}
	require.Len(t, ofKind(out, EffectSessionCreate), 1)
	warned := false
	for _, l := range ofKind(out, EffectLog) {
		warned = warned || (l.Level == "warn" && l.Message == "task bg_lost: reading its parent's children failed 4 times; its child session is made anew, though one made before the restart may run too: connection refused")
	}
	require.True(t, warned, "the log says why")

	m, look = restoreUnbound(t)
	out = m.Step(9100, Event{Type: EventEffectDone, EffectID: look.ID, OK: true, Result: json.RawMessage(`{"not":"a list"}`)})
	out = m.Step(10_100, Event{Type: EventTimer, TimerID: ofKind(out, EffectTimerSet)[0].TimerID})
	out = m.Step(10_200, Event{Type: EventEffectDone, EffectID: ofKind(out, EffectSessionChildren)[0].ID, OK: true, Result: json.RawMessage(childrenNamingIt)})
	require.Empty(t, ofKind(out, EffectSessionCreate))
	got, _ := m.Task("bg_lost")
	require.Equal(t, "ses_lost", got.SessionID)
}

// A task cancelled while its child was looked for: the child found is deleted, as one made
// meanwhile would be, and none is made.
func TestAnUnboundTaskCancelledWhileLookedForLeavesNoChild(t *testing.T) {
	m, look := restoreUnbound(t)
	m.Step(9050, Event{Type: EventToolCall, CallID: "c1", Tool: ToolCancel, SessionID: "ses_p", Args: json.RawMessage(`{"task_id":"bg_lost"}`)})
	got, _ := m.Task("bg_lost")
	require.Equal(t, task.StatusCancelled, got.Status)
	out := m.Step(9100, Event{Type: EventEffectDone, EffectID: look.ID, OK: true, Result: json.RawMessage(childrenNamingIt)})
	del := ofKind(out, EffectSessionDelete)
	require.Len(t, del, 1)
	require.Equal(t, "ses_lost", del[0].SessionID)
	require.Empty(t, ofKind(out, EffectSessionCreate))
}

// On a worker, which holds no parent session, the child is looked for among the sessions titled
// as the task's child, and one of another parent is not taken. A look that fails while the
// worker is down waits for its return, then looks again; the adopted child is reconciled there.
func TestAnUnboundRemoteTaskLooksForItsChildOnItsWorker(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	tk := task.Task{ID: "bg_lost", ParentSessionID: "ses_p", ParentMessageID: "m_p", BatchID: "m_p", Description: "filler", Prompt: "do",
		Agent: "general", Worker: "w1", Status: task.StatusRunning, StartedAt: 900_000, Depth: 1, Progress: task.Progress{LastTools: []string{}}}
	_, eff := h.m.Restore(h.now, HistoryLine(tk))
	eff = append(eff, h.run(Event{Type: EventStart})...)
	require.Empty(t, ofKind(eff, EffectSessionChildren))
	require.Empty(t, ofKind(eff, EffectSessionCreate))
	look := ofKind(eff, EffectSessionList)
	require.Len(t, look, 1)
	require.Equal(t, "w1", look[0].Worker)
	require.Equal(t, "/srv/w1/repo", look[0].Directory)
	require.Equal(t, "filler (@general subagent)", look[0].Title)
	eff = h.run(Event{Type: EventEffectDone, EffectID: look[0].ID, Error: "worker w1: connection refused"})
	require.Empty(t, timersNamed(eff, childrenTimerPrefix+"bg_lost"), "no retry while the worker is down: its return looks again")
	require.Empty(t, ofKind(eff, EffectSessionCreate))

	eff = h.state("w1", true, "")
	look = ofKind(eff, EffectSessionList)
	require.Len(t, look, 1, "looked for again at the worker's return")
	require.Empty(t, ofKind(eff, EffectSessionCreate))
	eff = h.run(Event{Type: EventEffectDone, EffectID: look[0].ID, OK: true, Result: json.RawMessage(
		`[{"id":"ses_twin","parentID":"ses_q","metadata":{"asyncagents":{"task":"bg_lost"}}},` + childrenNamingIt[1:])})
	require.Equal(t, "ses_lost", h.m.task("bg_lost").SessionID)
	st := ofKind(eff, EffectStatus)
	require.Len(t, st, 1)
	require.Equal(t, "w1", st[0].Worker)
	eff = h.run(Event{Type: EventEffectDone, EffectID: st[0].ID, OK: true, Result: json.RawMessage(`{"ses_lost":{"type":"busy"}}`)})
	rd := ofKind(eff, EffectMessages)
	require.Len(t, rd, 1)
	require.Equal(t, "w1", rd[0].Worker)
	require.Equal(t, "ses_lost", rd[0].SessionID)
}

// The history binds the task to its session, but the stop came before the prompt was stored: the
// child holds no message and is not busy. The task never began, so it begins now (its prompt
// goes to that session) rather than ending as interrupted; a child with a message still ends so.
func TestARecordedChildNeverPromptedIsPromptedAtTheRestart(t *testing.T) {
	for _, tc := range []struct {
		msgs     string
		prompted bool
	}{
		{`[]`, true},
		{`[{"info":{"id":"u","role":"user","time":{"created":1100}},"parts":[]}]`, false},
	} {
		line := HistoryLine(task.Task{ID: "bg_rec", ParentSessionID: "ses_p", ParentMessageID: "m_p", ParentAgent: "build",
			BatchID: "m_p", Description: "filler", Prompt: "do", Agent: "general", Status: task.StatusRunning, StartedAt: 1000,
			SessionID: "ses_rec", Progress: task.Progress{LastTools: []string{}}, Depth: 1})
		m := NewMachine(config.Config{})
		_, out := m.Restore(9000, line)
		out = m.Step(9100, Event{Type: EventEffectDone, EffectID: ofKind(out, EffectStatus)[0].ID, OK: true, Result: json.RawMessage(`{}`)})
		out = m.Step(9200, Event{Type: EventEffectDone, EffectID: ofKind(out, EffectMessages)[0].ID, OK: true, Result: json.RawMessage(tc.msgs)})
		got, _ := m.Task("bg_rec")
		p := prompts(out, "ses_rec")
		if tc.prompted {
			require.Equal(t, task.StatusRunning, got.Status)
			require.Len(t, p, 1)
			require.Equal(t, "do", p[0].Parts[0].Text)
		} else {
			require.Equal(t, task.StatusError, got.Status)
			require.Equal(t, "Interrupted", got.Error.Name)
			require.Empty(t, p)
		}
		require.Empty(t, ofKind(out, EffectSessionCreate))
	}
}

// A worker's child is made without a parentID (the parent session is this machine's); one made
// before that, with the local parent's, is found as well.
func TestARemoteTasksChildWithNoParentIsFound(t *testing.T) {
	for _, child := range []string{`{"id":"ses_found","metadata":{"asyncagents":{"task":"bg_lost"}}}`,
		`{"id":"ses_found","parentID":"ses_p","metadata":{"asyncagents":{"task":"bg_lost"}}}`} {
		h := newWK(t, twoWorkers(nil))
		tk := task.Task{ID: "bg_lost", ParentSessionID: "ses_p", ParentMessageID: "m_p", BatchID: "m_p", Description: "filler", Prompt: "do",
			Agent: "general", Worker: "w1", Status: task.StatusRunning, StartedAt: 900_000, Depth: 1, Progress: task.Progress{LastTools: []string{}}}
		_, eff := h.m.Restore(h.now, HistoryLine(tk))
		eff = append(eff, h.run(Event{Type: EventStart})...)
		look := ofKind(eff, EffectSessionList)
		require.Len(t, look, 1)
		h.run(Event{Type: EventEffectDone, EffectID: look[0].ID, OK: true, Result: json.RawMessage(`[` + child + `]`)})
		require.Equal(t, "ses_found", h.m.task("bg_lost").SessionID, child)
	}
}
