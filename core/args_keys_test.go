package core

import (
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/stretchr/testify/require"
)

// A key a tool does not take is refused, named, with the keys it does take, and nothing is
// created; the same keys spelled right are taken.
func TestUnknownArgumentKeysAreRefused(t *testing.T) {
	h := newFB(t, config.Config{})
	for args, want := range map[string]string{
		`{"description":"x","prompt":"p","agent":"general","budget":{"dollars":5}}`: `asyncagents_task: argument budget has no key "dollars"; its keys are steps, tokens, costUsd; no task was created`,
		`{"description":"x","prompt":"p","agent":"general","model":"a/b"}`:          `asyncagents_task: unknown argument "model"; the arguments are description, prompt, agent, resume, fork, timeout, budget, isolation, worker; no task was created`,
	} {
		reply := h.call(ToolTask, args)
		require.Equal(t, want, reply.Error, args)
	}
	require.Empty(t, h.m.Tasks(), "nothing was created")
	require.Contains(t, h.call(ToolOutput, `{"task_id":"bg_x","blocks":true}`).Error, `unknown argument "blocks"; the arguments are task_id, block, timeout, offset, limit`)
	reply := h.call(ToolTask, `{"description":"x","prompt":"p","agent":"general","budget":{"costUsd":5}}`)
	require.Empty(t, reply.Error)
	require.Len(t, h.m.Tasks(), 1)
}
