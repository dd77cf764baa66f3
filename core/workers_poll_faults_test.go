package core

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// idleTick fires w1's poll timer, answers its status read with nothing busy and the read of the
// messages that follows with msgs; returns the effects.
func (h *wkHarness) idleTick(msgs string) []Effect {
	eff := h.tick()
	for _, pl := range ofKind(eff, EffectPermissionList) {
		h.listed(pl, `[]`)
	}
	out := h.run(Event{Type: EventEffectDone, EffectID: ofKind(eff, EffectStatus)[0].ID, OK: true, Result: json.RawMessage(`{}`)})
	for _, rd := range ofKind(out, EffectMessages) {
		out = append(out, h.run(Event{Type: EventEffectDone, EffectID: rd.ID, OK: true, Result: json.RawMessage(msgs)})...)
	}
	return append(eff, out...)
}

// A polled child whose prompt failed before any answer (its session.error on no stream) sits
// idle with only its prompt: 30 s after the prompt the task fails, naming the worker, with one
// notice. Before that it is a slow start and waits.
func TestAPolledTaskWithNoAnswerFails(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	h.idleParent()
	onlyPrompt := `[{"info":{"id":"msg_u","role":"user","time":{"created":1}},"parts":[]}]`
	for range 20 {
		h.idleTick(onlyPrompt)
	}
	require.Equal(t, task.StatusRunning, tk.Status, "20 s idle after its prompt: still a slow start")
	var eff []Effect
	for i := 0; i < 15 && !tk.Status.Terminal(); i++ {
		eff = h.idleTick(onlyPrompt)
	}
	require.Equal(t, task.StatusError, tk.Status)
	require.Equal(t, "NoAnswer", tk.Error.Name)
	require.Contains(t, tk.Error.Message, "worker w1")
	require.Len(t, parentNotices(eff), 1)
}

// A slow polled worker's reads do not pile up: while a tick's status read is out the next
// tick sends none, and while a read of a task's messages is out no other is sent.
func TestAPolledWorkersReadsDoNotPileUp(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	first := h.tick()
	st := ofKind(first, EffectStatus)
	require.Len(t, st, 1)
	require.Len(t, ofKind(first, EffectPermissionList), 1)
	second := h.tick()
	require.Empty(t, ofKind(second, EffectStatus), "the first read is still out")
	require.Empty(t, ofKind(second, EffectPermissionList), "the first read of its questions is still out")
	eff := h.run(Event{Type: EventEffectDone, EffectID: st[0].ID, OK: true, Result: json.RawMessage(`{}`)})
	require.Len(t, ofKind(eff, EffectMessages), 1)
	eff = h.tick()
	eff = h.run(Event{Type: EventEffectDone, EffectID: ofKind(eff, EffectStatus)[0].ID, OK: true, Result: json.RawMessage(`{}`)})
	require.Empty(t, ofKind(eff, EffectMessages), "the read of %s's messages is still out", tk.ID)
}

// An answer the user gives through asyncagents is recorded as given: no permission.replied
// comes from a polled worker, and the next read of its requests does not call it gone.
func TestAPolledWorkersAnsweredPermissionIsRecorded(t *testing.T) {
	h := newWK(t, polledW1(func(c *config.Config) { c.Permission.TimeoutMs = 5_000 }))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	h.idleParent()
	eff := h.tick()
	h.listed(ofKind(eff, EffectPermissionList)[0], pendingOn(tk.SessionID, "per_1"))
	require.NotNil(t, tk.pendingPermission("per_1"))
	h.now += 5_000
	eff = h.run(Event{Type: EventTimer, TimerID: permissionTimerPrefix + tk.ID + ":per_1"})
	reply := ofKind(eff, EffectPermissionReply)
	require.Len(t, reply, 1)
	h.run(Event{Type: EventEffectDone, EffectID: reply[0].ID, OK: true})
	require.Nil(t, tk.pendingPermission("per_1"))
	h.listed(ofKind(h.tick(), EffectPermissionList)[0], `[]`)
	require.Equal(t, task.PermissionReject, tk.permission("per_1").Reply, "recorded as answered, not gone")
}

// A polled worker's agents are asked again at each heartbeat (no dispose event tells of a
// change there); a followed one's are not.
func TestAPolledWorkersAgentsAreAskedAgain(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	eff := h.run(Event{Type: EventTimer, TimerID: HeartbeatTimer})
	asks := ofKind(eff, EffectAgentsList)
	require.Len(t, asks, 1)
	require.Equal(t, "w1", asks[0].Worker)
}

// A polled task with a chain of models, busy at each tick but with no new part between its
// progress reads, is not abandoned for the next model at attemptTimeoutMs.
func TestAPolledBusyTaskKeepsItsAttempt(t *testing.T) {
	h := newWK(t, polledW1(func(c *config.Config) {
		c.Agents = chainAB.Agents
		c.Fallback.AttemptTimeoutMs = 3_000
	}))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	for range 8 {
		h.busyTick(tk, `[]`)
		eff := h.run(Event{Type: EventTimer, TimerID: attemptTimerPrefix + tk.ID})
		require.Empty(t, ofKind(eff, EffectAbort), "busy: its attempt goes on")
	}
	require.Equal(t, "mock/mock-a", tk.Model)
}

// doneTick ends a polled task: its status read finds it idle, and its end read answers text.
func (h *wkHarness) doneTick(tk *run, created int64, text string) []Effect {
	return h.idleTick(fmt.Sprintf(`[{"info":{"id":"msg_end%d","role":"assistant","finish":"stop","time":{"created":%d,"completed":%d}},"parts":[{"type":"text","text":%q}]}]`, created, created, created+1, text))
}

// A resumed polled task: the read of its newest messages shows the earlier run's answer; it is
// neither this run's partial work nor its result, and the earlier run's tool call is not counted
// again.
func TestAPolledResumeIgnoresTheEarlierRun(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	h.busyTick(tk, workingOn(tk.SessionID, tk.StartedAt, "first run's text"))
	h.doneTick(tk, h.now, "first answer")
	require.Equal(t, task.StatusCompleted, tk.Status)
	require.Equal(t, 1, tk.Progress.ToolCalls)
	h.now += 1000
	eff := h.run(Event{Type: EventToolCall, CallID: "call_res", Tool: ToolTask, SessionID: "ses_p", MessageID: "msg_p2",
		Args: json.RawMessage(fmt.Sprintf(`{"resume":%q,"prompt":"more"}`, tk.ID))})
	get := ofKind(eff, EffectSessionGet)
	require.Len(t, get, 1, "a resume checks the session first")
	h.run(Event{Type: EventEffectDone, EffectID: get[0].ID, OK: true, Result: json.RawMessage(fmt.Sprintf(`{"id":%q}`, tk.SessionID))})
	require.Equal(t, task.StatusResumed, tk.Status)
	old := workingOn(tk.SessionID, tk.StartedAt, "first run's text")
	for range 6 {
		h.busyTick(tk, old)
	}
	require.Equal(t, task.StatusResumed, tk.Status, "the earlier answer does not end the resumed run")
	require.NotEqual(t, "first run's text", tk.latestText)
	require.Equal(t, 1, tk.Progress.ToolCalls, "the earlier run's call is not counted again")
	h.doneTick(tk, h.now, "second answer")
	require.Equal(t, task.StatusCompleted, tk.Status)
	require.Equal(t, "second answer", tk.Result)
}

// Read again and again, an unchanged snapshot writes nothing and is no activity; a changed one
// is both.
func TestAPolledSnapshotReadAgainChangesNothing(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	same := workingOn(tk.SessionID, tk.StartedAt, "half of it")
	h.busyTick(tk, same)
	require.Equal(t, "half of it", tk.Partial.Text)
	h.writeProgress()
	at, lines := tk.Progress.LastUpdate, len(ofKind(h.effects, EffectHistoryAppend))
	for range 11 {
		h.busyTick(tk, same)
	}
	h.writeProgress()
	require.Equal(t, at, tk.Progress.LastUpdate, "nothing new: no activity")
	require.Equal(t, lines, len(ofKind(h.effects, EffectHistoryAppend)), "nothing new: no history line")
	require.Equal(t, 1, tk.Progress.ToolCalls)
	for range 5 {
		h.busyTick(tk, workingOn(tk.SessionID, tk.StartedAt, "more of it"))
	}
	require.Equal(t, "more of it", tk.Partial.Text)
	require.Greater(t, tk.Progress.LastUpdate, at)
	h.writeProgress()
	require.Greater(t, len(ofKind(h.effects, EffectHistoryAppend)), lines, "its new text is written")
}

// A step that asked for tools spent half the budget, the answer after it the rest and more:
// the answer is the result, as on a followed worker, with no budget stop.
func TestAPolledAnswerIsNotStoppedByItsOwnSpending(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchArgs("a", `,"worker":"w1","budget":{"tokens":1000}`)))
	at := tk.StartedAt
	msgs := fmt.Sprintf(`[{"info":{"id":"msg_1","role":"assistant","finish":"tool-calls","time":{"created":%d,"completed":%d},"tokens":{"input":500,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0},"parts":[]},
	 {"info":{"id":"msg_2","role":"assistant","finish":"stop","time":{"created":%d,"completed":%d},"tokens":{"input":700,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0},"parts":[{"type":"text","text":"the answer"}]}]`, at, at+1, at+2, at+3)
	h.busyTick(tk, msgs)
	require.Equal(t, task.StatusRunning, tk.Status, "an answer that ends the turn is not stopped")
	h.idleTick(msgs)
	require.Equal(t, task.StatusCompleted, tk.Status, "%+v", tk.Error)
	require.Equal(t, "the answer", tk.Result)
}

// A steer moves the attempt's start past the step at work: its tool, running at one read and
// done at the next, is not left marked running (which would hold off the attempt timeout).
func TestAPolledSteerLeavesNoToolRunning(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	tool := func(status string) string {
		return fmt.Sprintf(`[{"info":{"id":"msg_a","role":"assistant","time":{"created":%d}},"parts":[{"id":"prt_b","type":"tool","callID":"call_b","tool":"bash","state":{"status":%q}}]}]`, tk.StartedAt, status)
	}
	h.busyTick(tk, tool("running"))
	require.Len(t, tk.toolsRunning, 1)
	h.run(Event{Type: EventToolCall, CallID: "call_m", Tool: ToolMessage, SessionID: "ses_p", Args: json.RawMessage(`{"task_id":"` + tk.ID + `","message":"also this"}`)})
	for range 6 {
		h.busyTick(tk, tool("running"))
	}
	require.Len(t, tk.toolsRunning, 1, "still at work after the steer")
	for range 6 {
		h.busyTick(tk, tool("completed"))
	}
	require.Empty(t, tk.toolsRunning)
}

// Restored while it worked, a polled task's calls were counted before the restart: the reads
// after it show them again, and they are not counted twice; a new call is.
func TestAPolledTaskRestoredCountsNoCallTwice(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.now = 1_000_000
	hist := HistoryLine(task.Task{ID: otherID, SessionID: "ses_r1", ParentSessionID: "ses_p", ParentMessageID: "msg_p", BatchID: "msg_p",
		Description: "Survey", Prompt: "p", Agent: "general", Worker: "w1", Status: task.StatusRunning, StartedAt: 990_000, Depth: 1,
		Progress: task.Progress{ToolCalls: 1, LastTools: []string{"glob"}, LastUpdate: 995_000}})
	_, _ = h.m.Restore(h.now, hist)
	eff := h.run(Event{Type: EventStart})
	for _, st := range ofKind(eff, EffectStatus) {
		out := h.run(Event{Type: EventEffectDone, EffectID: st.ID, OK: true, Result: json.RawMessage(`{"ses_r1":{"type":"busy"}}`)})
		for _, rd := range ofKind(out, EffectMessages) {
			h.run(Event{Type: EventEffectDone, EffectID: rd.ID, OK: true, Result: json.RawMessage(workingOn("ses_r1", 991_000, "half"))})
		}
	}
	tk := h.m.tasks[otherID]
	require.Equal(t, task.StatusRunning, tk.Status)
	for range 6 {
		h.busyTick(tk, workingOn("ses_r1", 991_000, "half"))
	}
	require.Equal(t, 1, tk.Progress.ToolCalls, "the call counted before the restart is not counted again")
	h.now += 5_000
	later := fmt.Sprintf(`[{"info":{"id":"msg_b","role":"assistant","time":{"created":%d}},"parts":[{"id":"prt_r","type":"tool","callID":"call_r","tool":"read","state":{"status":"completed"}}]}]`, h.now)
	h.busyTick(tk, later)
	require.Equal(t, 2, tk.Progress.ToolCalls, "a new call is")
	// Its end read shows the whole conversation, a call from before the restart that no read
	// showed since among it: counted before, it is not counted again.
	whole := fmt.Sprintf(`[{"info":{"id":"msg_0","role":"assistant","time":{"created":990500,"completed":990600}},"parts":[{"id":"prt_o","type":"tool","callID":"call_old","tool":"bash","state":{"status":"completed"}}]},
	 {"info":{"id":"msg_b","role":"assistant","time":{"created":%d,"completed":%d}},"parts":[{"id":"prt_r","type":"tool","callID":"call_r","tool":"read","state":{"status":"completed"}}]},
	 {"info":{"id":"msg_z","role":"assistant","finish":"stop","time":{"created":%d,"completed":%d}},"parts":[{"type":"text","text":"done"}]}]`, h.now, h.now, h.now+1, h.now+2)
	h.idleTick(whole)
	require.Equal(t, task.StatusCompleted, tk.Status)
	require.Equal(t, 2, tk.Progress.ToolCalls, "the earlier call is not counted again at the end")
}
