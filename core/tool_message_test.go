package core

import (
	"fmt"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// A message to a running task goes to its child as a prompt; an answer the child finishes after
// it but began before it is not the result: the answer to the message is.
func TestMessageSteersARunningTask(t *testing.T) {
	h := newFB(t, config.Config{})
	id := h.launchFrom("ses_p", "survey")
	ses := h.m.task(id).SessionID
	h.busy(ses)
	before := h.now // the child's first answer began before the message
	h.idleParent()
	eff := h.step(Event{Type: EventToolCall, CallID: "m1", Tool: ToolMessage, SessionID: "ses_p", Args: []byte(fmt.Sprintf(`{"task_id":%q,"message":"also check the README"}`, id))})
	reply := ofKind(eff, EffectToolReply)[0]
	require.Empty(t, reply.Error)
	require.Contains(t, reply.Output, "Message sent to task "+id)
	sent := prompts(eff, ses)
	require.Len(t, sent, 1)
	require.Equal(t, "also check the README", sent[0].Parts[0].Text)
	require.Len(t, h.m.task(id).Steers, 1)

	// The first answer completes after the message: not the outcome.
	h.oc("message.part.updated", fmt.Sprintf(`{"part":{"id":"prt_1","sessionID":%q,"messageID":"msg_1","type":"text","text":"old answer","time":{"end":1}}}`, ses))
	h.oc("message.updated", fmt.Sprintf(`{"info":{"id":"msg_1","sessionID":%q,"role":"assistant","finish":"stop","time":{"created":%d,"completed":%d}}}`, ses, before, h.now))
	require.Equal(t, task.StatusRunning, h.m.task(id).Status)
	// The answer to the message is.
	h.answer(ses, "", "README checked too")
	require.Equal(t, task.StatusCompleted, h.m.task(id).Status)
	require.Equal(t, "README checked too", h.m.task(id).Result)
}

func TestMessageToQueuedAndEndedTasks(t *testing.T) {
	h := newFB(t, config.Config{MaxConcurrentStarts: 1})
	a := h.launchFrom("ses_p", "A")
	q := h.launchFrom("ses_p", "Q")
	send := func(id, text string) Effect {
		return ofKind(h.step(Event{Type: EventToolCall, CallID: "m" + text, Tool: ToolMessage, SessionID: "ses_p", Args: []byte(fmt.Sprintf(`{"task_id":%q,"message":%q}`, id, text))}), EffectToolReply)[0]
	}
	require.Contains(t, send(q, "skip the tests").Output, "added to the prompt it starts with")
	require.Equal(t, "work\n\nskip the tests", h.m.task(q).Prompt)
	h.answer(h.m.task(a).SessionID, "", "done")
	require.Contains(t, send(a, "more").Error, fmt.Sprintf(`asyncagents_task(resume=%q`, a))
	require.Contains(t, send("bg_nope", "x").Error, "no background task has task_id")
	require.Contains(t, send(a, "").Error, "task_id and message are both required")
	other := ofKind(h.step(Event{Type: EventToolCall, CallID: "mo", Tool: ToolMessage, SessionID: "ses_other", Args: []byte(fmt.Sprintf(`{"task_id":%q,"message":"x"}`, q))}), EffectToolReply)[0]
	require.Contains(t, other.Error, "belongs to another session")
}

func TestMessagesAreInTheOutput(t *testing.T) {
	h := newFB(t, config.Config{})
	id := h.launchFrom("ses_p", "survey")
	h.idleParent()
	h.now += 12_000
	h.step(Event{Type: EventToolCall, CallID: "m1", Tool: ToolMessage, SessionID: "ses_p", Args: []byte(fmt.Sprintf(`{"task_id":%q,"message":"also check the README"}`, id))})
	require.Contains(t, h.call(ToolOutput, fmt.Sprintf(`{"task_id":%q}`, id)).Output, "messages sent:\n- after 12s: also check the README\n")
}
