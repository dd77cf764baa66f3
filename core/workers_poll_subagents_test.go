package core

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/ocevents"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// leading is a child's step that runs OpenCode's task tool: its part names the subagent's
// session in its metadata, status being the part's ("running", "completed").
func leading(session string, at int64, sub, status string) string {
	return fmt.Sprintf(`[{"info":{"id":"msg_u","role":"user","time":{"created":%[2]d}},"parts":[]},
	 {"info":{"id":"msg_a","role":"assistant","time":{"created":%[2]d},"tokens":{"input":100,"output":20,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0.01},
	  "parts":[{"id":"prt_k","type":"tool","callID":"call_k","tool":"task","state":{"status":%[4]q,"title":"look","metadata":{"sessionId":%[3]q,"model":{"modelID":"m"}}}}]}]`, session, at, sub, status)
}

// subSpent is a subagent's conversation: one assistant message per input figure, each a step.
func subSpent(at int64, inputs ...int) json.RawMessage {
	msgs := []string{fmt.Sprintf(`{"info":{"id":"msg_s0","role":"user","time":{"created":%d}},"parts":[]}`, at)}
	for i, in := range inputs {
		msgs = append(msgs, fmt.Sprintf(`{"info":{"id":"msg_s%[1]d","role":"assistant","time":{"created":%[2]d},"tokens":{"input":%[3]d,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0.001},
		 "parts":[{"id":"prt_f%[1]d","type":"step-finish","reason":"stop"}]}`, i+1, at, in))
	}
	return json.RawMessage("[" + strings.Join(msgs, ",") + "]")
}

// childTick fires w1's poll timer, answers its status read with tk busy and the reads of tk's own
// messages with msgs, leaving any other read (a subagent's) to the test; returns the effects.
func (h *wkHarness) childTick(tk *run, msgs string) []Effect {
	eff := h.tick()
	for _, pl := range ofKind(eff, EffectPermissionList) {
		h.listed(pl, `[]`)
	}
	st := ofKind(eff, EffectStatus)
	require.Len(h.t, st, 1)
	out := h.run(Event{Type: EventEffectDone, EffectID: st[0].ID, OK: true, Result: json.RawMessage(`{"` + tk.SessionID + `":{"type":"busy"}}`)})
	for _, rd := range readsOf(out, tk.SessionID) {
		out = append(out, h.run(Event{Type: EventEffectDone, EffectID: rd.ID, OK: true, Result: json.RawMessage(msgs)})...)
	}
	return append(eff, out...)
}

// readsOf are the reads of session's messages among eff.
func readsOf(eff []Effect, session string) []Effect {
	var out []Effect
	for _, e := range ofKind(eff, EffectMessages) {
		if e.SessionID == session {
			out = append(out, e)
		}
	}
	return out
}

// A polled child's subagent spends for its task, as a local child's does: found by the task
// tool's part, its newest messages are read while the part runs, its whole conversation once the
// part ended, and no message counts twice.
func TestAPolledChildsSubagentSpendsForItsTask(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchOn("a", "w1")))

	eff := h.childTick(tk, leading(tk.SessionID, tk.StartedAt, "ses_sub", "running"))
	rd := readsOf(eff, "ses_sub")
	require.Len(t, rd, 1, "found by its part: read at once")
	require.Equal(t, polledProgressMessages, rd[0].Limit, "running: its newest messages")
	require.Equal(t, "w1", rd[0].Worker, "on the task's worker")
	h.run(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true, Result: subSpent(tk.StartedAt, 50)})
	tokens, _ := tk.Usage()
	require.Equal(t, int64(150), tokens.Input, "the child's 100 and its subagent's 50")
	require.Equal(t, 1, tk.Steps, "the subagent's model call")
	require.Equal(t, "ses_sub", tk.UsageMark("ses_sub").Session)

	for range 4 { // within 5 s: no read of either
		require.Empty(t, ofKind(h.childTick(tk, `[]`), EffectMessages))
	}
	eff = h.childTick(tk, leading(tk.SessionID, tk.StartedAt, "ses_sub", "completed"))
	rd = readsOf(eff, "ses_sub")
	require.Len(t, rd, 1, "its part ended: read again, with the child's progress")
	require.Equal(t, polledProgressMessages, rd[0].Limit, "it was running when this read was asked")
	eff = h.run(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true, Result: subSpent(tk.StartedAt, 50, 30)})
	rd = readsOf(eff, "ses_sub")
	require.Len(t, rd, 1, "then, its part ended, once that read is back")
	require.Zero(t, rd[0].Limit, "its whole conversation")
	h.run(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true, Result: subSpent(tk.StartedAt, 50, 30, 7)})
	tokens, _ = tk.Usage()
	require.Equal(t, int64(187), tokens.Input, "each of its messages once")
	require.Equal(t, 3, tk.Steps)
	h.now += polledProgressEveryMs
	require.Empty(t, readsOf(h.childTick(tk, leading(tk.SessionID, tk.StartedAt, "ses_sub", "completed")), "ses_sub"),
		"read whole once: never again")
}

// A subagent found only at the task's end (it ran between two reads) is read whole then; what
// it spent counts though the task has ended, and stops nothing.
func TestASubagentFoundAtItsTasksEndStillCounts(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchArgs("a", `,"worker":"w1","budget":{"tokens":120}`)))
	answer := withAnswer(leading(tk.SessionID, tk.StartedAt, "ses_late", "completed"), tk.StartedAt+1, "done")
	eff := h.idleTick(answer)
	require.Equal(t, task.StatusCompleted, tk.Status)
	rd := readsOf(eff, "ses_late")
	require.Len(t, rd, 1)
	require.Zero(t, rd[0].Limit)
	h.run(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true, Result: subSpent(tk.StartedAt, 40)})
	tokens, _ := tk.Usage()
	require.Equal(t, int64(140), tokens.Input, "counted, past its budget of 120")
	require.Equal(t, task.StatusCompleted, tk.Status, "an ended task is not stopped")
}

// A subagent running when its task's child goes idle, its last read back or still out: the
// task's end read is not held up by that read, and the end read, which shows the subagent's part
// ended, has it read whole.
func TestASubagentRunningAtItsTasksEndIsReadWhole(t *testing.T) {
	for _, backFirst := range []bool{false, true} {
		t.Run(fmt.Sprint("its read back first: ", backFirst), func(t *testing.T) {
			h := newWK(t, polledW1(nil))
			h.run(Event{Type: EventStart})
			tk := h.taskOf(first(h.launchOn("a", "w1")))
			rd := readsOf(h.childTick(tk, leading(tk.SessionID, tk.StartedAt, "ses_sub", "running")), "ses_sub")
			require.Len(t, rd, 1, "its newest messages asked")
			if backFirst {
				require.Empty(t, readsOf(h.run(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true, Result: subSpent(tk.StartedAt, 50)}), "ses_sub"))
			}
			answer := strings.TrimSuffix(leading(tk.SessionID, tk.StartedAt, "ses_sub", "completed"), "]") +
				fmt.Sprintf(`,{"info":{"id":"msg_z","role":"assistant","finish":"stop","time":{"created":%d,"completed":%d}},"parts":[{"type":"text","text":"done"}]}]`, tk.StartedAt+1, tk.StartedAt+2)
			h.now += polledProgressEveryMs
			eff := h.idleTick(answer)
			require.Equal(t, task.StatusCompleted, tk.Status, "its end read went, the subagent's read out or not")
			if !backFirst {
				require.Empty(t, readsOf(eff, "ses_sub"), "its read is still out")
				eff = h.run(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true, Result: subSpent(tk.StartedAt, 50)})
			}
			whole := readsOf(eff, "ses_sub")
			require.Len(t, whole, 1, "its part ended: read whole")
			require.Zero(t, whole[0].Limit)
			h.run(Event{Type: EventEffectDone, EffectID: whole[0].ID, OK: true, Result: subSpent(tk.StartedAt, 50, 25)})
			tokens, _ := tk.Usage()
			require.Equal(t, int64(175), tokens.Input)
		})
	}
}

// Which parts name a subagent to follow: a task tool's, with a session of its own, up to
// maxPolledSubs a task.
func TestWhichPartsNameASubagent(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	part := func(tool, sub string) string {
		return fmt.Sprintf(`{"type":"tool","tool":%q,"state":{"status":"running","metadata":{"sessionId":%q}}}`, tool, sub)
	}
	parts := []string{part("bash", "ses_bash"), part("task", tk.SessionID), part("task", ""), `{"type":"text","text":"x","state":{"metadata":{"sessionId":"ses_txt"}}}`}
	for i := range maxPolledSubs + 1 {
		parts = append(parts, part("task", fmt.Sprintf("ses_s%02d", i)))
	}
	msgs, err := ocevents.DecodeMessages([]byte(`[{"info":{"id":"msg_a","role":"assistant"},"parts":[` + strings.Join(parts, ",") + `]}]`))
	require.NoError(t, err)
	h.m.notePolledSubs(tk, tk.SessionID, msgs)
	require.Len(t, tk.polledSubs, maxPolledSubs, "task parts with a session of their own, up to the bound")
	for _, sub := range []string{"ses_bash", tk.SessionID, "", "ses_txt", fmt.Sprintf("ses_s%02d", maxPolledSubs)} {
		require.NotContains(t, tk.polledSubs, sub)
	}
}

// A running subagent's spending is held to the task's budget; a subagent's own subagents are
// found in its messages; a read that failed is asked again with the next progress read.
func TestAPolledSubagentsSpendingStopsItsTaskAtItsBudget(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchArgs("a", `,"worker":"w1","budget":{"tokens":300}`)))
	eff := h.childTick(tk, leading(tk.SessionID, tk.StartedAt, "ses_sub", "running"))
	rd := readsOf(eff, "ses_sub")
	require.Len(t, rd, 1)
	h.run(Event{Type: EventEffectDone, EffectID: rd[0].ID, Error: "worker w1: reading the messages: timeout"})

	h.now += polledProgressEveryMs
	eff = h.childTick(tk, `[]`)
	rd = readsOf(eff, "ses_sub")
	require.Len(t, rd, 1, "asked again with the next progress read")
	nested := strings.Replace(leading("ses_sub", tk.StartedAt, "ses_deep", "running"), `"msg_a"`, `"msg_sa"`, 1)
	eff = h.run(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true, Result: json.RawMessage(nested)})
	deep := readsOf(eff, "ses_deep")
	require.Len(t, deep, 1, "its own subagent, found in its messages")
	require.Equal(t, "ses_sub", h.m.sessionsBelow.get("ses_deep"))
	require.Equal(t, task.StatusRunning, tk.Status, "100 + 100: within 300")
	h.run(Event{Type: EventEffectDone, EffectID: deep[0].ID, OK: true, Result: subSpent(tk.StartedAt, 150)})
	require.Equal(t, task.StatusError, tk.Status, "350 tokens: over its budget")
	require.Contains(t, tk.Error.Message, "budget")
}

// subSpentFrom is subSpent with its messages numbered from first (a read of the newest ones).
func subSpentFrom(at int64, first int, inputs ...int) json.RawMessage {
	var msgs []string
	for i, in := range inputs {
		msgs = append(msgs, fmt.Sprintf(`{"info":{"id":"msg_s%[1]d","role":"assistant","time":{"created":%[2]d,"completed":%[2]d},"finish":"tool-calls","tokens":{"input":%[3]d,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0.001},
		 "parts":[{"id":"prt_f%[1]d","type":"step-finish","reason":"tool-calls"}]}`, first+i, at, in))
	}
	return json.RawMessage("[" + strings.Join(msgs, ",") + "]")
}

// A read of a subagent's newest messages does not hide the ones before them from the read of
// all of them: each message and step counts once, the earlier ones too.
func TestANewestReadHidesNothingFromTheWholeRead(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	rd := readsOf(h.childTick(tk, leading(tk.SessionID, tk.StartedAt, "ses_sub", "running")), "ses_sub")
	require.Equal(t, polledProgressMessages, rd[0].Limit)
	h.run(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true, Result: subSpentFrom(tk.StartedAt, 3, 3, 4, 5, 6)})
	tokens, _ := tk.Usage()
	require.Equal(t, int64(100+18), tokens.Input, "its newest four")
	h.now += polledProgressEveryMs
	rd = readsOf(h.childTick(tk, leading(tk.SessionID, tk.StartedAt, "ses_sub", "completed")), "ses_sub")
	require.Len(t, rd, 1)
	eff := h.run(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true, Result: subSpentFrom(tk.StartedAt, 3, 3, 4, 5, 6)})
	rd = readsOf(eff, "ses_sub")
	require.Len(t, rd, 1)
	require.Zero(t, rd[0].Limit)
	h.run(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true, Result: subSpentFrom(tk.StartedAt, 1, 1, 2, 3, 4, 5, 6)})
	tokens, _ = tk.Usage()
	require.Equal(t, int64(100+21), tokens.Input, "its first two, below its mark, counted too")
	require.Equal(t, 6, tk.Steps)
}

// OpenCode's task tool may continue a subagent's session: a new call naming a session read
// whole has it read again, and only what is new counts.
func TestASubagentContinuedByANewCallIsReadAgain(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	rd := readsOf(h.childTick(tk, leading(tk.SessionID, tk.StartedAt, "ses_sub", "completed")), "ses_sub")
	require.Zero(t, rd[0].Limit)
	h.run(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true, Result: subSpent(tk.StartedAt, 50)})
	again := strings.Replace(leading(tk.SessionID, tk.StartedAt, "ses_sub", "running"), `"call_k"`, `"call_k2"`, 1)
	h.now += polledProgressEveryMs
	rd = readsOf(h.childTick(tk, again), "ses_sub")
	require.Len(t, rd, 1, "a new call: read again")
	require.Equal(t, polledProgressMessages, rd[0].Limit, "running again: its newest messages")
	h.run(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true, Result: subSpent(tk.StartedAt, 50, 40)})
	tokens, _ := tk.Usage()
	require.Equal(t, int64(190), tokens.Input, "its first message once, its new one added")
}

// A subagent's step is its task's turn going on, whatever its own reason: a step budget stops
// the task at it; a read after the subagent ended holds nothing to the budget (the child may
// have answered), the child's next progress read does.
func TestASubagentsSpendingMeetsTheBudgetAsAFollowedOnesDoes(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchArgs("a", `,"worker":"w1","budget":{"steps":1}`)))
	rd := readsOf(h.childTick(tk, leading(tk.SessionID, tk.StartedAt, "ses_sub", "running")), "ses_sub")
	h.run(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true, Result: subSpent(tk.StartedAt, 10)})
	require.Equal(t, task.StatusError, tk.Status, "its subagent's step, reason stop, is the task's first: stopped")

	h = newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	tk = h.taskOf(first(h.launchArgs("b", `,"worker":"w1","budget":{"tokens":120}`)))
	rd = readsOf(h.childTick(tk, leading(tk.SessionID, tk.StartedAt, "ses_sub", "completed")), "ses_sub")
	h.run(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true, Result: subSpent(tk.StartedAt, 50)})
	require.Equal(t, task.StatusRunning, tk.Status, "150 tokens, read after the subagent ended: not held to the budget yet")
	h.now += polledProgressEveryMs
	h.childTick(tk, workingOn(tk.SessionID, tk.StartedAt, "still at it"))
	require.Equal(t, task.StatusError, tk.Status, "the child still works: its progress read stops it")
}

// A subagent whose newest messages show its answer has ended, whatever its part says yet: it is
// read whole at once, and not again while its part still shows it running.
func TestASubagentsOwnAnswerEndsIt(t *testing.T) {
	h := newWK(t, polledW1(nil))
	h.run(Event{Type: EventStart})
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	rd := readsOf(h.childTick(tk, leading(tk.SessionID, tk.StartedAt, "ses_sub", "running")), "ses_sub")
	eff := h.run(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true, Result: answered(tk.StartedAt, "sub's answer")})
	rd = readsOf(eff, "ses_sub")
	require.Len(t, rd, 1, "its turn ended: read whole")
	require.Zero(t, rd[0].Limit)
	h.run(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true, Result: answered(tk.StartedAt, "sub's answer")})
	h.now += polledProgressEveryMs
	require.Empty(t, readsOf(h.childTick(tk, leading(tk.SessionID, tk.StartedAt, "ses_sub", "running")), "ses_sub"),
		"its part still running, the same call: read whole once, not again")
}
