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
