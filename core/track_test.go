package core

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

// A child's answer, complete in the events, finishes its task at once, before the session's idle,
// when the task has no second model to leave for: whether OpenCode chooses the model, or the task
// runs on its parent's (the common case since a task's model is known at launch). A chain of two
// models waits for the idle, which leaving a model needs.
func TestAnAnswerCompleteInTheEventsFinishesBeforeTheIdle(t *testing.T) {
	for _, c := range []struct {
		name        string
		cfg         config.Config
		parentModel bool
		models      int
		early       bool
	}{
		{"no model known", config.Config{}, false, 0, true},
		{"the parent's model", config.Config{}, true, 1, true},
		{"a chain of two", config.Config{Agents: map[string]config.AgentModels{"general": {Models: []string{"mock/a", "mock/b"}}}}, true, 2, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newFB(t, c.cfg)
			if c.parentModel {
				h.oc("message.updated", `{"info":{"id":"msg_p","sessionID":"ses_p","role":"assistant","providerID":"mock","modelID":"a","time":{"created":1}}}`)
			}
			id := h.launchFrom("ses_p", "A")
			tk := h.m.task(id)
			require.Len(t, tk.Models, c.models)
			child := tk.SessionID
			h.busy(child)
			h.oc("message.part.updated", fmt.Sprintf(`{"part":{"id":"prt_1","sessionID":%q,"messageID":"msg_1","type":"text","text":"the answer","time":{"end":5}}}`, child))
			h.oc("message.updated", fmt.Sprintf(`{"info":{"id":"msg_1","sessionID":%q,"role":"assistant","finish":"stop","providerID":"mock","modelID":"a","time":{"created":2,"completed":6}}}`, child))
			if c.early {
				require.Equal(t, task.StatusCompleted, h.status(id), "finished on the completed message")
				require.Equal(t, "the answer", h.m.task(id).Result)
				return
			}
			require.Equal(t, task.StatusRunning, h.status(id), "waits for the idle")
			h.oc("session.idle", fmt.Sprintf(`{"sessionID":%q}`, child))
			require.Equal(t, task.StatusCompleted, h.status(id))
		})
	}
}
