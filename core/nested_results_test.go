package core

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

// A child that answers while tasks it launched are under way does not end its task: its tasks'
// notices wake it, and its next answer, with their results, is the task's result. Until the
// waking notice is seen stored in the child's session, a read of its old answer ends nothing.
func TestATaskWaitsForItsOwnTasksAndEndsWithTheAnswerToThem(t *testing.T) {
	h := newFB(t, config.Config{})
	lead := h.launchFrom("ses_p", "lead")
	child := h.m.task(lead).SessionID
	nested := h.launchFrom(child, "nested")
	h.idleParent()

	h.answer(child, "", "launched the nested task")
	tk := h.m.task(lead)
	require.Equal(t, task.StatusRunning, tk.Status, "its own task is under way")
	require.True(t, tk.waitingTasks)
	h.now += 10 * 60_000
	h.m.now = h.now
	h.m.checkLiveness()
	require.Zero(t, tk.StalledSince, "waiting for its tasks is no stall")

	before := len(h.effects)
	h.answer(h.m.task(nested).SessionID, "", "nested found 42")
	require.Equal(t, task.StatusCompleted, h.m.task(nested).Status)
	woke := prompts(h.effects[before:], child)
	require.Len(t, woke, 1)
	require.False(t, woke[0].NoReply, "the nested task's notice wakes the child")
	h.oc("session.idle", fmt.Sprintf(`{"sessionID":%q}`, child)) // a read before the notice is stored
	require.Equal(t, task.StatusRunning, tk.Status, "the old answer ends nothing")

	h.oc("message.updated", fmt.Sprintf(`{"info":{"id":"msg_notice","sessionID":%q,"role":"user","time":{"created":%d}}}`, child, h.now+1))
	h.now += 10
	h.answer(child, "", "the nested task found 42")
	require.Equal(t, task.StatusCompleted, tk.Status)
	require.Equal(t, "the nested task found 42", tk.Result)
}

// A child with nothing of its own under way ends its task with its answer, as before.
func TestATaskWithNoTasksOfItsOwnEndsAtOnce(t *testing.T) {
	h := newFB(t, config.Config{})
	lead := h.launchFrom("ses_p", "lead")
	child := h.m.task(lead).SessionID
	nested := h.launchFrom(child, "nested")
	h.answer(h.m.task(nested).SessionID, "", "done first")
	h.oc("message.updated", fmt.Sprintf(`{"info":{"id":"msg_notice","sessionID":%q,"role":"user","time":{"created":%d}}}`, child, h.now+1))
	h.now += 10
	h.answer(child, "", "all done")
	require.Equal(t, task.StatusCompleted, h.m.task(lead).Status)
	require.Equal(t, "all done", h.m.task(lead).Result)
}

// A task waiting for its own tasks holds no slot: under maxConcurrentStarts 1 its queued task
// starts once it answered, and it holds its slot again once their notice has it at work.
func TestATaskWaitingForItsOwnTasksHoldsNoSlot(t *testing.T) {
	h := newFB(t, config.Config{MaxConcurrentStarts: 1})
	lead := h.launchFrom("ses_p", "lead")
	child := h.m.task(lead).SessionID
	nested := h.launchFrom(child, "nested")
	require.True(t, h.m.task(nested).Queued, "the lead holds the one slot")
	h.answer(child, "", "launched it")
	require.False(t, h.m.task(nested).Queued, "started once the lead waits for it")
	require.NotEmpty(t, h.m.task(nested).SessionID)
	h.answer(h.m.task(nested).SessionID, "", "done")
	h.oc("message.updated", fmt.Sprintf(`{"info":{"id":"msg_notice","sessionID":%q,"role":"user","time":{"created":%d}}}`, child, h.now+1))
	require.False(t, h.m.task(lead).waitingTasks, "at work again")
	other := h.launchFrom("ses_p", "other")
	require.True(t, h.m.task(other).Queued, "the lead holds its slot again")
}

// In a headless run the child's turn is held for its own tasks: the task waits for them the same
// way, and its slot frees for them.
func TestAHeadlessHoldOfAChildFreesItsSlot(t *testing.T) {
	cfg := headlessRun
	cfg.MaxConcurrentStarts = 1
	h := newFB(t, cfg)
	lead := h.launchFrom("ses_p", "lead")
	child := h.m.task(lead).SessionID
	nested := h.launchFrom(child, "nested")
	require.True(t, h.m.task(nested).Queued)
	require.False(t, h.turnEnd("hold_child", child), "held for its own task")
	require.True(t, h.m.task(lead).waitingTasks)
	require.False(t, h.m.task(nested).Queued, "started in the slot the lead left")
}
