package core

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

// A subagent's spending counts toward its task's budgets even where its session.created was not
// seen: created while a worker's stream was down (the machine walks up the worker's sessions), or
// before a restart (its task's usage marks name it).

// spentOn has session on worker report an assistant message's spending, through that stream.
func (h *wkHarness) spentOn(worker, session, msgID string, input int, cost float64) []Effect {
	return h.from(worker, "message.updated", fmt.Sprintf(`{"info":{"id":%q,"sessionID":%q,"role":"assistant","finish":"tool-calls","tokens":{"input":%d,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"cost":%v,"time":{"created":%d}}}`, msgID, session, input, cost, h.now))
}

func (h *wkHarness) stepOn(worker, session, partID string) []Effect {
	return h.from(worker, "message.part.updated", fmt.Sprintf(`{"part":{"id":%q,"sessionID":%q,"messageID":"msg_s","type":"step-finish","reason":"tool-calls"}}`, partID, session))
}

func TestAWorkersUnseenSubagentsSpendingIsTracedAndCounted(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	h.state("w1", true, "")
	tk := h.taskOf(first(h.launchArgs("delegates", `,"worker":"w1","budget":{"tokens":1000,"steps":3}`)))
	h.idleParent()

	gets := ofKind(h.spentOn("w1", "ses_gap", "msg_1", 400, 0.01), EffectSessionGet)
	require.Len(t, gets, 1, "a walk starts")
	require.Empty(t, ofKind(h.stepOn("w1", "ses_gap", "prt_1"), EffectSessionGet), "one walk at a time")
	h.spentOn("w1", "ses_gap", "msg_1", 500, 0.02) // the same message, grown, while the walk goes on
	require.Zero(t, tk.Steps)
	gets = ofKind(h.parentIs(gets[0], "ses_mid"), EffectSessionGet)
	require.Len(t, gets, 1, "up one more")
	h.parentIs(gets[0], tk.SessionID)
	tok, cost := tk.Usage()
	require.Equal(t, int64(500), tok.Total(), "the message counted once, at its latest figure")
	require.InDelta(t, 0.02, cost, 1e-9)
	require.Equal(t, 1, tk.Steps)

	require.Empty(t, ofKind(h.stepOn("w1", "ses_gap", "prt_2"), EffectSessionGet), "the way is remembered")
	require.Equal(t, 2, tk.Steps)
	h.spentOn("w1", "ses_gap", "msg_2", 600, 0.01)
	require.Equal(t, task.StatusError, tk.Status, "held to the budget")
	require.Contains(t, tk.Error.Message, "budget exceeded: 1100 tokens (limit 1000)")
}

func TestAWorkersForeignSpendingIsWalkedOnce(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	h.state("w1", true, "")
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	get := ofKind(h.spentOn("w1", "ses_else", "msg_1", 10, 0), EffectSessionGet)
	require.Len(t, get, 1)
	h.parentIs(get[0], "")
	require.Empty(t, ofKind(h.spentOn("w1", "ses_else", "msg_2", 10, 0), EffectSessionGet))
	require.Empty(t, ofKind(h.stepOn("w1", "ses_else", "prt_1"), EffectSessionGet))
	tok, _ := tk.Usage()
	require.Zero(t, tok.Total())
	// A user message or a text part spends nothing: no walk.
	require.Empty(t, ofKind(h.from("w1", "message.updated", `{"info":{"id":"msg_u","sessionID":"ses_other","role":"user","time":{"created":1}}}`), EffectSessionGet))
	require.Empty(t, ofKind(h.from("w1", "message.part.updated", `{"part":{"id":"prt_t","sessionID":"ses_other","messageID":"msg_u","type":"text","text":"hi"}}`), EffectSessionGet))
}

// After a restart, a subagent that spent before it goes on counting: its task's usage marks name
// its session, though its session.created is not seen again.
func TestASubagentSpendingAcrossARestartGoesOnCounting(t *testing.T) {
	h := newFB(t, config.Config{})
	id := h.launchWith("long", `,"budget":{"tokens":1000}`).Metadata["taskId"].(string)
	ses := h.m.task(id).SessionID
	h.subagent(ses, "ses_sub")
	h.subagent("ses_sub", "ses_subsub")
	h.spent("ses_sub", "msg_1", 300, 0.01, "tool-calls")
	h.spent("ses_subsub", "msg_2", 300, 0.01, "tool-calls")

	m := NewMachine(config.Config{})
	_, eff := m.Restore(h.now+1000, HistoryLine(h.m.task(id).Task))
	h.m = m
	// Reconciled first: a budget stop leaves a task still being reconciled to its reconcile.
	eff = h.step(Event{Type: EventEffectDone, EffectID: ofKind(eff, EffectStatus)[0].ID, OK: true, Result: json.RawMessage(fmt.Sprintf(`{%q:{"type":"busy"}}`, ses))})
	h.step(Event{Type: EventEffectDone, EffectID: ofKind(eff, EffectMessages)[0].ID, OK: true, Result: json.RawMessage(`[]`)})
	h.spent("ses_sub", "msg_3", 200, 0.01, "tool-calls")
	tok, _ := h.m.task(id).Usage()
	require.Equal(t, int64(800), tok.Total())
	h.spent("ses_subsub", "msg_4", 300, 0.01, "stop")
	require.Equal(t, task.StatusError, h.m.task(id).Status)
	require.Contains(t, h.m.task(id).Error.Message, "budget exceeded: 1100 tokens (limit 1000)")
}

// A failed walk (a session the worker cannot read from the tasks' directory: another project's,
// on a shared worker) keeps that session's spending from walking again for walkRetryMs; a
// request walks at once, and the spending joins a walk under way.
func TestAFailedWalkHoldsSpendingBackAWhile(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	h.state("w1", true, "")
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	get := ofKind(h.spentOn("w1", "ses_x", "msg_1", 10, 0), EffectSessionGet)
	require.Len(t, get, 1)
	h.run(Event{Type: EventEffectDone, EffectID: get[0].ID, Error: "worker w1: reading the session: 404 Not Found"})
	require.Empty(t, ofKind(h.spentOn("w1", "ses_x", "msg_2", 10, 0), EffectSessionGet), "held back")
	require.Empty(t, ofKind(h.stepOn("w1", "ses_x", "prt_1"), EffectSessionGet))

	get = ofKind(h.asksOn("w1", "ses_x", "per_1"), EffectSessionGet)
	require.Len(t, get, 1, "a request walks at once")
	h.stepOn("w1", "ses_x", "prt_2") // joins it
	h.parentIs(get[0], tk.SessionID)
	require.NotNil(t, tk.pendingPermission("per_1"))
	require.Equal(t, 1, tk.Steps, "the spending that joined the walk counts")

	get = ofKind(h.spentOn("w1", "ses_y", "msg_3", 10, 0), EffectSessionGet)
	h.run(Event{Type: EventEffectDone, EffectID: get[0].ID, Error: "worker w1: reading the session: timed out"})
	h.now += walkRetryMs
	require.Len(t, ofKind(h.spentOn("w1", "ses_y", "msg_4", 10, 0), EffectSessionGet), 1, "walked again after walkRetryMs")
}

// A walk that ends at a task which has ended records the way: the session's later spending finds
// that task at once and is passed over, with no walk each.
func TestAWalkToAnEndedTaskIsRemembered(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	h.state("w1", true, "")
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	h.idleParent()
	h.call(ToolCancel, fmt.Sprintf(`{"task_id":%q}`, tk.ID))
	require.True(t, tk.Status.Terminal())
	get := ofKind(h.spentOn("w1", "ses_bg", "msg_1", 10, 0), EffectSessionGet)
	require.Len(t, get, 1)
	h.parentIs(get[0], tk.SessionID)
	for i := range 5 {
		require.Empty(t, ofKind(h.spentOn("w1", "ses_bg", fmt.Sprint("msg_", i+2), 10, 0), EffectSessionGet), i)
	}
	tok, _ := tk.Usage()
	require.Zero(t, tok.Total(), "an ended task counts nothing more")
}

// While a task on the worker has no session bound yet, a walk that ends at a session with no
// parent may have reached that very child: it is not remembered as foreign, but its session's
// spending waits walkRetryMs before walking again.
func TestAForeignWalkWhileAChildIsUnboundHoldsItsSpendingBack(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	h.state("w1", true, "")
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	child := tk.SessionID
	tk.SessionID = "" // as a restored task whose child is still looked for
	get := ofKind(h.spentOn("w1", "ses_foreign", "msg_1", 10, 0), EffectSessionGet)
	require.Len(t, get, 1)
	h.parentIs(get[0], "")
	for i := range 3 {
		require.Empty(t, ofKind(h.spentOn("w1", "ses_foreign", fmt.Sprint("msg_", i+2), 10, 0), EffectSessionGet), i)
	}
	get = ofKind(h.asksOn("w1", "ses_foreign", "per_1"), EffectSessionGet)
	require.Len(t, get, 1, "a request walks at once")
	h.parentIs(get[0], "")
	require.Empty(t, ofKind(h.spentOn("w1", "ses_foreign", "msg_8", 10, 0), EffectSessionGet), "held again")
	h.m.bindSession(tk, child) // found: the held session may have been its subagent
	require.Len(t, ofKind(h.spentOn("w1", "ses_foreign", "msg_9", 10, 0), EffectSessionGet), 1, "walked again at once")
}

// A task restored with spending counted but no mark for its child's session (a record older
// than the marks, or one whose marks went to subagents) does not count its child's earlier
// messages again when it reads them all: the mark its first message after the restart sets
// keeps them out, as it always did.
func TestARestoredTaskWithoutItsChildsMarkCountsNothingTwice(t *testing.T) {
	h := newFB(t, config.Config{})
	id := h.launchWith("long", "").Metadata["taskId"].(string)
	ses := h.m.task(id).SessionID
	h.spent(ses, "msg_1", 100, 0, "tool-calls")
	h.spent(ses, "msg_2", 200, 0, "tool-calls")
	rec := h.m.task(id).Task
	rec.UsageMarks = nil

	m := NewMachine(config.Config{})
	_, eff := m.Restore(h.now+1000, HistoryLine(rec))
	h.m = m
	eff = h.step(Event{Type: EventEffectDone, EffectID: ofKind(eff, EffectStatus)[0].ID, OK: true, Result: json.RawMessage(fmt.Sprintf(`{%q:{"type":"busy"}}`, ses))})
	h.step(Event{Type: EventEffectDone, EffectID: ofKind(eff, EffectMessages)[0].ID, OK: true, Result: json.RawMessage(`[]`)})
	h.spent(ses, "msg_3", 50, 0, "tool-calls")
	tok, _ := h.m.task(id).Usage()
	require.Equal(t, int64(350), tok.Total())

	eff = h.oc("session.idle", fmt.Sprintf(`{"sessionID":%q}`, ses))
	rd := ofKind(eff, EffectMessages)
	require.Len(t, rd, 1)
	msg := func(id string, input int, finish string) string {
		return fmt.Sprintf(`{"info":{"id":%q,"role":"assistant","finish":%q,"time":{"created":%d,"completed":%d},"tokens":{"input":%d,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0},"parts":[{"type":"text","text":"done"}]}`,
			id, finish, h.now, h.now, input)
	}
	h.step(Event{Type: EventEffectDone, EffectID: rd[0].ID, OK: true, Result: json.RawMessage(
		"[" + msg("msg_1", 100, "tool-calls") + "," + msg("msg_2", 200, "tool-calls") + "," + msg("msg_3", 50, "stop") + "]")})
	require.Equal(t, task.StatusCompleted, h.m.task(id).Status)
	tok, _ = h.m.task(id).Usage()
	require.Equal(t, int64(350), tok.Total(), "its earlier messages were counted before the restart")
}
