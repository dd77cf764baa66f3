package core

import (
	"encoding/json"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// upAndLaunch has w1 up and one task at work there, with some partial text streamed.
func upAndLaunch(t *testing.T, mut func(*config.Config)) (*wkHarness, *run) {
	h := newWK(t, twoWorkers(mut))
	h.run(Event{Type: EventStart})
	h.state("w1", true, "")
	r, _ := h.launchOn("a", "w1")
	tk := h.taskOf(r)
	h.from("w1", "message.part.updated", `{"part":{"id":"prt_1","sessionID":"`+tk.SessionID+`","messageID":"msg_1","type":"text","text":"half of it"}}`)
	return h, tk
}

// A worker down for lostAfterMs fails its tasks, naming it and the reason, keeping their partial
// work; requests that fail before that fail nothing.
func TestLostWorkerFailsItsTasks(t *testing.T) {
	h, tk := upAndLaunch(t, nil)
	eff := h.state("w1", false, "connection refused")
	armed := timersNamed(eff, workerLostPrefix+"w1")
	require.Len(t, armed, 1)
	require.Equal(t, int64(30_000), armed[0].DelayMs)
	// A prompt that fails meanwhile (a steer) does not fail the task.
	h.now += 10
	eff = h.m.Step(h.now, Event{Type: EventToolCall, CallID: "call_m", Tool: ToolMessage, SessionID: "ses_p", Args: json.RawMessage(`{"task_id":"` + tk.ID + `","message":"also this"}`)})
	steer := ofKind(eff, EffectPromptAsync)
	require.Len(t, steer, 1)
	require.Equal(t, "w1", steer[0].Worker)
	h.run(Event{Type: EventEffectDone, EffectID: steer[0].ID, Error: "connection refused"})
	require.Equal(t, task.StatusRunning, tk.Status)
	h.run(Event{Type: EventTimer, TimerID: workerLostPrefix + "w1"})
	require.Equal(t, task.StatusError, tk.Status)
	require.Equal(t, "worker w1 was lost: connection refused", tk.Error.Message)
	require.Equal(t, "half of it", tk.Partial.Text)
	require.Equal(t, 0, h.m.Workers()[0].Running)
}

// Back before the limit: the timer is cleared and the tasks there are checked (status, then
// messages for one no longer busy); the lost timer firing late changes nothing.
func TestWorkerBackBeforeTheLimit(t *testing.T) {
	h, tk := upAndLaunch(t, nil)
	h.state("w1", false, "timed out after 5 s")
	eff := h.state("w1", true, "")
	require.Len(t, ofKind(eff, EffectTimerClear), 1)
	st := ofKind(eff, EffectStatus)
	require.Len(t, st, 1)
	require.Equal(t, "w1", st[0].Worker)
	require.Equal(t, "/srv/w1/repo", st[0].Directory)
	eff = h.run(Event{Type: EventEffectDone, EffectID: st[0].ID, OK: true, Result: json.RawMessage(`{}`)})
	rd := ofKind(eff, EffectMessages)
	require.Len(t, rd, 1, "a child no longer busy has its messages read")
	require.Equal(t, "w1", rd[0].Worker)
	h.run(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true, Result: json.RawMessage(
		`[{"info":{"id":"m1","role":"assistant","finish":"stop","time":{"created":1,"completed":2}},"parts":[{"type":"text","text":"finished while away"}]}]`)})
	require.Equal(t, task.StatusCompleted, tk.Status)
	require.Equal(t, "finished while away", tk.Result)
	h.run(Event{Type: EventTimer, TimerID: workerLostPrefix + "w1"})
	require.Equal(t, task.StatusCompleted, tk.Status)
	// The idle that arrives late on the stream, a second return and the poll tell nothing twice.
	h.answerOn("w1", tk.SessionID, "finished while away")
	h.state("w1", true, "")
	h.poll()
	h.from("", "session.idle", `{"sessionID":"ses_p"}`)
	notices := 0
	for _, p := range ofKind(h.effects, EffectPromptAsync) {
		if p.Notice {
			notices++
		}
	}
	require.Equal(t, 1, notices, "one notice")
}

// With rerunLost, a lost task starts again as a new session elsewhere.
func TestLostWorkerRerun(t *testing.T) {
	h, tk := upAndLaunch(t, func(c *config.Config) {
		w := c.Workers["w1"]
		w.RerunLost = true
		c.Workers["w1"] = w
	})
	old := tk.SessionID
	h.state("w1", false, "connection refused")
	eff := h.run(Event{Type: EventTimer, TimerID: workerLostPrefix + "w1"})
	require.Equal(t, task.StatusRunning, tk.Status)
	require.Empty(t, tk.Worker, "placed again: w1 is down, w2 unknown, so local")
	require.NotEqual(t, old, tk.SessionID)
	creates := ofKind(eff, EffectSessionCreate)
	require.Len(t, creates, 1)
	require.Empty(t, creates[0].Worker)
}

// A restored task on a worker is reconciled on that worker once its stream is up, not locally;
// one on a worker no longer configured fails, saying so.
func TestRestoredRemoteTasks(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	mk := func(id, worker string) task.Task {
		return task.Task{ID: id, SessionID: "ses_" + id, ParentSessionID: "ses_p", ParentMessageID: "msg_p", BatchID: "msg_p", Description: "d",
			Prompt: "p", Agent: "general", Worker: worker, Status: task.StatusRunning, StartedAt: 900_000, Depth: 1,
			Progress: task.Progress{LastTools: []string{}, LastUpdate: 900_000}}
	}
	_, eff := h.m.Restore(h.now, HistoryLine(mk("bg_1", "w1"))+HistoryLine(mk("bg_2", "w9")))
	require.Empty(t, ofKind(eff, EffectStatus), "no local status read for a remote task")
	eff = h.run(Event{Type: EventStart})
	gone := h.m.task("bg_2")
	require.Equal(t, task.StatusError, gone.Status)
	require.Equal(t, "worker w9 is no longer configured (workers in asyncagents.json), so the task cannot be followed", gone.Error.Message)
	require.Equal(t, task.StatusRunning, h.m.task("bg_1").Status)
	eff = h.state("w1", true, "")
	st := ofKind(eff, EffectStatus)
	require.Len(t, st, 1)
	require.Equal(t, "w1", st[0].Worker)
	eff = h.run(Event{Type: EventEffectDone, EffectID: st[0].ID, OK: true, Result: json.RawMessage(`{"ses_bg_1":{"type":"busy"}}`)})
	rd := ofKind(eff, EffectMessages)
	require.Len(t, rd, 1)
	require.Equal(t, "w1", rd[0].Worker)
	require.Equal(t, "ses_bg_1", rd[0].SessionID)
	h.run(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true, Result: json.RawMessage(`[{"info":{"id":"u1","role":"user","time":{"created":900001}},"parts":[]}]`)})
	require.Equal(t, task.StatusRunning, h.m.task("bg_1").Status, "still busy on w1: followed on")
}

// A task placed on a worker whose stream is not up (its health answered) arms the lost timer:
// a stream that never comes up does not leave the task at work for ever.
func TestPlacedOnAWorkerNotUpArmsTheLostTimer(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	r, eff := h.launchOn("a", "w1")
	tk := h.taskOf(r)
	require.Len(t, timersNamed(eff, workerLostPrefix+"w1"), 1)
	h.run(Event{Type: EventTimer, TimerID: workerLostPrefix + "w1"})
	require.Equal(t, task.StatusError, tk.Status)
	require.Equal(t, "worker w1 was lost: its event stream never came up", tk.Error.Message)
}
