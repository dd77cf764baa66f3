package core

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// Helpers for the liveness tests, on the fallback tests' harness (fallback_test.go).

// poll fires the polling timer at the harness's time, which is when stalls and wall-clock
// limits are looked at.
func (h *fbHarness) poll() []Effect { return h.step(Event{Type: EventTimer, TimerID: pollTimer}) }

// wait lets ms pass without any event, then fires the polling timer.
func (h *fbHarness) wait(ms int64) []Effect {
	h.now += ms
	return h.poll()
}

// work has the child write text (a part not yet ended unless ended) in message msgID.
func (h *fbHarness) work(id, msgID, partID, text string, ended bool) {
	end := 0
	if ended {
		end = 1
	}
	h.oc("message.part.updated", fmt.Sprintf(`{"part":{"id":%q,"sessionID":%q,"messageID":%q,"type":"text","text":%q,"time":{"start":1,"end":%d}}}`, partID, id, msgID, text, end))
}

// tool has the child run a tool call in the given state, with a title.
func (h *fbHarness) tool(id, callID, name, status, title string) {
	h.oc("message.part.updated", fmt.Sprintf(`{"part":{"id":"prt_%s","sessionID":%q,"messageID":"msg_w","type":"tool","callID":%q,"tool":%q,"state":{"status":%q,"title":%q}}}`, callID, id, callID, name, status, title))
}

// parentNotices are the notices among effects: prompts to the parent session.
func parentNotices(effects []Effect) []Effect {
	var out []Effect
	for _, e := range effects {
		if e.Kind == EffectPromptAsync && e.SessionID == "ses_p" {
			out = append(out, e)
		}
	}
	return out
}

func (h *fbHarness) call(tool, args string) Effect {
	eff := h.step(Event{Type: EventToolCall, CallID: fmt.Sprint("c", h.now), Tool: tool, SessionID: "ses_p", Args: json.RawMessage(args)})
	replies := ofKind(eff, EffectToolReply)
	require.Len(h.t, replies, 1)
	return replies[0]
}

// idleParent ends the parent's turn: a parent running a tool call is busy.
func (h *fbHarness) idleParent() []Effect { return h.oc("session.idle", `{"sessionID":"ses_p"}`) }

func warnAfter(ms int64) config.Config {
	return config.Config{Stall: config.StallConfig{WarnAfterMs: &ms}}
}

// A silent child is marked stalled after the threshold and its parent told once, without a
// model turn; list and output show the mark; reminders reach the log, not the parent; activity
// clears the mark, and a new silence is a new stall with its own notice.
func TestStallIsMarkedAndToldOnce(t *testing.T) {
	h := newFB(t, warnAfter(120_000))
	id := h.launch()
	h.idleParent()
	h.busy(id)
	h.work(id, "msg_a", "prt_a", "reading the code", true)

	require.Empty(t, parentNotices(h.wait(60_000)), "not yet: a minute of silence")
	eff := h.wait(61_000)
	notices := parentNotices(eff)
	require.Len(t, notices, 1)
	require.True(t, notices[0].NoReply, "a stall costs the parent no model turn")
	require.Equal(t, `⚠ Agent "survey" has made no progress for 2m`, notices[0].Parts[0].Text)
	require.True(t, notices[0].Parts[1].Synthetic)
	require.Contains(t, notices[0].Parts[1].Text, "task_id: ")
	tk, _ := h.m.Task(id)
	require.NotZero(t, tk.StalledSince)

	list := h.call(ToolList, `{}`)
	require.Contains(t, list.Output, "running (stalled: no progress for 2m")
	out := h.call(ToolOutput, fmt.Sprintf(`{"task_id":%q}`, id))
	require.Contains(t, out.Output, "stalled: no progress for 2m")
	require.Contains(t, out.Output, "reading the code")

	// Reminders back off and go to the log: none before 4m of silence, one at it.
	require.Empty(t, ofKind(h.wait(30_000), EffectLog))
	var logs []Effect
	for i := 0; i < 8; i++ {
		eff := h.wait(15_000)
		require.Empty(t, parentNotices(eff))
		logs = append(logs, ofKind(eff, EffectLog)...)
	}
	require.Len(t, logs, 1, "one reminder between 2m and 4m 30s of silence")
	require.Contains(t, logs[0].Message, "has made no progress for 4m")

	h.work(id, "msg_a", "prt_b", "found it", false)
	tk, _ = h.m.Task(id)
	require.Zero(t, tk.StalledSince, "activity clears the mark")
	require.NotContains(t, h.call(ToolList, `{}`).Output, "stalled")
	h.idleParent()

	require.Len(t, parentNotices(h.wait(121_000)), 1, "a new silence is a new stall")
	h.answer(id, "", "done")
	tk, _ = h.m.Task(id)
	require.Equal(t, task.StatusCompleted, tk.Status)
	require.Zero(t, tk.StalledSince, "the mark ends with the task")
}

// A tool at work is activity: a long build is not a stall.
func TestToolAtWorkIsNoStall(t *testing.T) {
	h := newFB(t, warnAfter(60_000))
	id := h.launch()
	h.idleParent()
	h.busy(id)
	h.tool(id, "call_1", "bash", "running", "go test ./...")
	for i := 0; i < 10; i++ {
		require.Empty(t, parentNotices(h.wait(30_000)))
	}
	h.tool(id, "call_1", "bash", "completed", "go test ./...")
	require.Empty(t, parentNotices(h.wait(30_000)))
	require.Len(t, parentNotices(h.wait(31_000)), 1)
}

// 0 turns the warning off.
func TestStallWarningOff(t *testing.T) {
	h := newFB(t, warnAfter(0))
	id := h.launch()
	h.busy(id)
	for i := 0; i < 5; i++ {
		require.Empty(t, parentNotices(h.wait(3_600_000)))
	}
	tk, _ := h.m.Task(id)
	require.Zero(t, tk.StalledSince)
}

// A stall notice waits while the parent is busy, and is dropped if the stall is over when the
// parent goes idle.
func TestStallNoticeWaitsForAnIdleParent(t *testing.T) {
	h := newFB(t, warnAfter(60_000))
	id := h.launch()
	h.busy(id)
	h.busy("ses_p")
	require.Empty(t, parentNotices(h.wait(61_000)), "held while the parent works")
	h.work(id, "msg_a", "prt_a", "back at it", true)
	require.Empty(t, parentNotices(h.oc("session.idle", `{"sessionID":"ses_p"}`)), "the stall is over: no notice")

	h.busy("ses_p")
	require.Empty(t, parentNotices(h.wait(61_000)))
	eff := h.oc("session.idle", `{"sessionID":"ses_p"}`)
	require.Len(t, parentNotices(eff), 1, "still stalled when the parent is idle: delivered")
}

// asyncagents_task's timeout: at the limit the child is aborted and the task fails with its
// partial work; the argument is checked.
func TestTaskTimeout(t *testing.T) {
	h := newFB(t, config.Config{})
	bad := h.call(ToolTask, `{"description":"x","prompt":"p","agent":"general","timeout":-5}`)
	require.Contains(t, bad.Error, "argument timeout")
	bad = h.call(ToolTask, `{"description":"x","prompt":"p","agent":"general","timeout":"soon"}`)
	require.Contains(t, bad.Error, "argument timeout")

	h.step(Event{Type: EventToolCall, CallID: "call_t", Tool: ToolTask, SessionID: "ses_p", MessageID: "msg_p",
		Args: json.RawMessage(`{"description":"survey","prompt":"look around","agent":"general","timeout":90}`)})
	id := fmt.Sprintf("ses_c%d", h.nextSes)
	h.busy(id)
	h.tool(id, "call_1", "read", "completed", "core/doc.go")
	h.work(id, "msg_a", "prt_a", "The core is layered; so far I read doc.go.", true)
	require.Empty(t, ofKind(h.wait(60_000), EffectAbort))
	eff := h.wait(31_000)
	aborts := ofKind(eff, EffectAbort)
	require.Len(t, aborts, 1)
	require.Equal(t, id, aborts[0].SessionID)
	tk, _ := h.m.Task(id)
	require.Equal(t, task.StatusError, tk.Status)
	require.Equal(t, "timed out after 1m 30s", tk.Error.Message)
	require.Equal(t, "The core is layered; so far I read doc.go.", tk.Partial.Text)
	require.Equal(t, []task.ToolRun{{Name: "read", Title: "core/doc.go"}}, tk.Partial.Tools)
	notices := parentNotices(eff)
	require.Len(t, notices, 1)
	hidden := notices[0].Parts[1].Text
	require.Contains(t, hidden, "error: timed out after 1m 30s")
	require.Contains(t, hidden, "<partial_work>")
	require.Contains(t, hidden, "- read: core/doc.go")
	require.Contains(t, hidden, "The core is layered; so far I read doc.go.")
}

// The config's taskTimeoutMs is the limit of a task launched without one.
func TestConfigTaskTimeout(t *testing.T) {
	h := newFB(t, config.Config{TaskTimeoutMs: 10_000})
	id := h.launch()
	h.wait(11_000)
	tk, _ := h.m.Task(id)
	require.Equal(t, task.StatusError, tk.Status)
	require.Equal(t, "Timeout", tk.Error.Name)
}

// A cancelled task carries its partial work in its notice and in asyncagents_output, the text
// cut at maxResultChars; a running task's output shows the last 500 characters of its text.
func TestPartialWorkOfACancelledTask(t *testing.T) {
	h := newFB(t, config.Config{MaxResultChars: 1000})
	id := h.launch()
	h.busy(id)
	h.tool(id, "call_1", "grep", "pending", "")
	h.tool(id, "call_1", "grep", "completed", "auth")
	long := strings.Repeat("a", 600) + strings.Repeat("b", 600)
	h.work(id, "msg_a", "prt_a", long, false)

	out := h.call(ToolOutput, fmt.Sprintf(`{"task_id":%q}`, id)).Output
	require.Contains(t, out, "<latest_text last_chars=\"500\">\n"+strings.Repeat("b", 500)+"\n</latest_text>")
	require.NotContains(t, out, "ab")

	h.step(Event{Type: EventToolCall, CallID: "cancel", Tool: ToolCancel, SessionID: "ses_p", Args: json.RawMessage(fmt.Sprintf(`{"task_id":%q}`, id))})
	notices := parentNotices(h.idleParent())
	require.Len(t, notices, 1)
	hidden := notices[0].Parts[1].Text
	require.Contains(t, hidden, "- grep: auth")
	require.Contains(t, hidden, "[partial text cut at 1000 of 1200 characters]")
	out = h.call(ToolOutput, fmt.Sprintf(`{"task_id":%q}`, id)).Output
	require.Contains(t, out, "status: cancelled")
	require.Contains(t, out, "<partial_work>")
	require.Contains(t, out, strings.Repeat("a", 600)+strings.Repeat("b", 400)+"\n[partial text cut")
}

// A message that only calls tools keeps the text before it as the latest; the text is written
// to the history once its part ends (progress: when the progress timer fires), so a restart
// keeps it.
func TestPartialTextIsKept(t *testing.T) {
	h := newFB(t, config.Config{})
	id := h.launch()
	h.busy(id)
	h.work(id, "msg_a", "prt_a", "step one done", false)
	h.work2(id, "msg_a", "prt_a", "step one done.", true)
	eff := h.writeProgress()
	var lines []string
	for _, e := range ofKind(eff, "history.append") {
		lines = append(lines, e.Line)
	}
	require.Contains(t, strings.Join(lines, "\n"), `"partial":{"text":"step one done."`)
	h.tool(id, "call_1", "read", "running", "")
	h.oc("message.updated", fmt.Sprintf(`{"info":{"id":"msg_b","sessionID":%q,"role":"assistant","time":{"created":%d}}}`, id, h.now))
	tk, _ := h.m.Task(id)
	require.Equal(t, "step one done.", tk.Partial.Text)
}

// work2 is work returning the effects of the part's event.
func (h *fbHarness) work2(id, msgID, partID, text string, ended bool) []Effect {
	end := 0
	if ended {
		end = 1
	}
	return h.oc("message.part.updated", fmt.Sprintf(`{"part":{"id":%q,"sessionID":%q,"messageID":%q,"type":"text","text":%q,"time":{"start":1,"end":%d}}}`, partID, id, msgID, text, end))
}

// A provider failure after some work carries the work; an attempt abandoned for the next model
// keeps its text in the fallback timeline.
func TestPartialWorkOfAFailedAttempt(t *testing.T) {
	h := newFB(t, chainAB)
	id := h.launch()
	h.busy(id)
	h.work(id, "msg_a", "prt_a", "half of the survey on A", true)
	h.answer(id, rateLimited, "")
	tk, _ := h.m.Task(id)
	require.Equal(t, "half of the survey on A", tk.FallbackInfo.Attempts[0].Partial)

	h.busy(id)
	eff := h.answer(id, `{"name":"APIError","data":{"message":"bad request","statusCode":400}}`, "")
	tk, _ = h.m.Task(id)
	require.Equal(t, task.StatusError, tk.Status)
	require.Empty(t, tk.FallbackInfo.Attempts[1].Partial, "B wrote nothing of its own")
	notices := parentNotices(eff)
	require.Len(t, notices, 1)
	require.Contains(t, notices[0].Parts[1].Text, "half of the survey on A")
}

// A resume's timeout limits the follow-up, counted from the resume; it clears the partial work
// of the run before it.
func TestResumeTimeout(t *testing.T) {
	h := newFB(t, config.Config{})
	id := h.launch()
	h.busy(id)
	h.tool(id, "call_1", "read", "completed", "a.go")
	h.answer(id, "", "first answer")
	h.wait(600_000)
	eff := h.step(Event{Type: EventToolCall, CallID: "call_resume", Tool: ToolTask, SessionID: "ses_p", MessageID: "msg_p2",
		Args: json.RawMessage(fmt.Sprintf(`{"resume":%q,"prompt":"more","timeout":30}`, id))})
	get := ofKind(eff, EffectSessionGet)
	require.Len(t, get, 1)
	h.step(Event{Type: EventEffectDone, EffectID: get[0].ID, OK: true, Result: json.RawMessage(fmt.Sprintf(`{"id":%q}`, id))})
	tk, _ := h.m.Task(id)
	require.Equal(t, task.StatusResumed, tk.Status)
	require.Nil(t, tk.Partial, "the follow-up starts with no partial work")
	h.wait(20_000)
	tk, _ = h.m.Task(id)
	require.Equal(t, task.StatusResumed, tk.Status)
	h.wait(11_000)
	tk, _ = h.m.Task(id)
	require.Equal(t, task.StatusError, tk.Status)
	require.Equal(t, "timed out after 30s", tk.Error.Message)
}

// The partial work and the time limit are in the task's record: a restart keeps them.
func TestPartialWorkSurvivesARestart(t *testing.T) {
	h := newFB(t, config.Config{})
	h.step(Event{Type: EventToolCall, CallID: "call_t", Tool: ToolTask, SessionID: "ses_p", MessageID: "msg_p",
		Args: json.RawMessage(`{"description":"survey","prompt":"look around","agent":"general","timeout":600}`)})
	id := fmt.Sprintf("ses_c%d", h.nextSes)
	h.busy(id)
	h.tool(id, "call_1", "grep", "running", "auth")
	h.work(id, "msg_a", "prt_a", "auth lives in core/auth.go", true)
	h.writeProgress()
	var log strings.Builder
	for _, e := range h.effects {
		switch e.Kind {
		case EffectHistoryAppend:
			log.WriteString(e.Line)
		case EffectHistoryRewrite:
			log.Reset()
			log.WriteString(e.Content)
		}
	}
	r := NewMachine(config.Config{})
	res, _ := r.Restore(h.now, log.String())
	require.Equal(t, 1, res.Restored)
	tk, ok := r.Task(id)
	require.True(t, ok)
	require.Equal(t, int64(600_000), tk.TimeoutMs)
	require.Equal(t, "auth lives in core/auth.go", tk.Partial.Text)
	require.Equal(t, []task.ToolRun{{Name: "grep", Title: "auth"}}, tk.Partial.Tools)
}
