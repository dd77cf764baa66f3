package core

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A task on a worker takes its agent's model, and its right to delegate, from the worker's list:
// w1's general has a model of its own and may launch tasks there; the local general has neither.
func TestAWorkersAgentGivesItsOwnModelAndRights(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	h.workerAgents = map[string]string{"w1": `[{"name":"general","mode":"subagent","model":{"providerID":"wp","modelID":"wm"},"permission":[{"permission":"task","pattern":"*","action":"allow"}]}]`}
	h.run(Event{Type: EventStart})
	h.state("w1", true, "")
	remote, _ := h.launchOn("on w1", "w1")
	local, _ := h.launchOn("here", "local")
	require.Equal(t, []string{"wp/wm"}, h.taskOf(remote).Models)
	require.True(t, h.taskOf(remote).canDelegate)
	require.Empty(t, h.taskOf(local).Models)
	require.False(t, h.taskOf(local).canDelegate)
}
