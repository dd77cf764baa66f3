package core

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// newAgentsRig is w1 and w2 (twoWorkers) started, with w1's agent lists left for the test to
// answer (answerAgents); the local list, health checks, session creates and prompts are answered.
func newAgentsRig(t *testing.T) *wkHarness {
	h := newWK(t, twoWorkers(nil))
	h.holdWorkerAgents = true
	h.run(Event{Type: EventStart})
	return h
}

// asks are the agent-list requests to w1 among effects.
func asks(effects []Effect) []Effect {
	var out []Effect
	for _, e := range ofKind(effects, EffectAgentsList) {
		if e.Worker == "w1" {
			out = append(out, e)
		}
	}
	return out
}

// answerAgents answers w1's agent request ask with the agents named (all subagents).
func (r *wkHarness) answerAgents(ask Effect, names ...string) []Effect {
	list := []AgentInfo{}
	for _, n := range names {
		list = append(list, AgentInfo{Name: n, Mode: "subagent"})
	}
	b, _ := json.Marshal(list)
	return r.run(Event{Type: EventEffectDone, EffectID: ask.ID, OK: true, Result: b})
}

// workerEvent feeds an event of worker's stream.
func (r *wkHarness) workerEvent(worker, typ, props string) []Effect {
	return r.run(Event{Type: EventOpenCode, Worker: worker, Event: &OpenCodeEvent{Type: typ, Properties: json.RawMessage(props)}})
}

// launchOnW1 asks for a task of agent on w1 and returns the effects.
func (r *wkHarness) launchOnW1(call, agent string) []Effect {
	return r.run(Event{Type: EventToolCall, CallID: call, Tool: ToolTask, SessionID: "ses_p", MessageID: "msg_p",
		Args: json.RawMessage(fmt.Sprintf(`{"description":"d","prompt":"p","agent":%q,"worker":"w1"}`, agent))})
}

// upWith brings w1's stream up and answers its agent request with names.
func (r *wkHarness) upWith(names ...string) {
	a := asks(r.run(Event{Type: EventWorkerState, Worker: "w1", Up: true}))
	require.Len(r.t, a, 1)
	r.answerAgents(a[0], names...)
}

// An agent added to a running worker's config is seen without a reconnect: OpenCode there drops
// its instance of the worker's directory (or all of them) on a config update, and the core asks
// w1's agents again, whatever form of the directory OpenCode names (it follows symlinks the
// config's path may go through); a dispose of w2, or of the local OpenCode, asks nothing of w1.
// Disposes that come while a request is in flight owe one more, not one each.
func TestAWorkersAgentsAreAskedAgainWhenItsInstanceIsDisposed(t *testing.T) {
	r := newAgentsRig(t)
	r.upWith("general")
	require.Equal(t, []string{"general"}, r.m.Workers()[0].Agents)

	require.Empty(t, asks(r.workerEvent("w2", "server.instance.disposed", `{"directory":"/srv/w1/repo"}`)))
	require.Empty(t, asks(r.workerEvent("", "server.instance.disposed", `{"directory":"/srv/w1/repo"}`)))

	// The config's /srv/w1/repo, as OpenCode resolved it through a symlink.
	a := asks(r.workerEvent("w1", "server.instance.disposed", `{"directory":"/data/clones/repo"}`))
	require.Len(t, a, 1, "w1's instance of its directory was dropped")
	require.Equal(t, "/srv/w1/repo", a[0].Directory, "asked in the directory as configured")
	require.Empty(t, asks(r.workerEvent("w1", "global.disposed", `{}`)), "one request at a time")
	require.Empty(t, asks(r.workerEvent("w1", "server.instance.disposed", `{"directory":"/srv/w1/repo"}`)))
	again := asks(r.answerAgents(a[0], "general", "added"))
	require.Equal(t, []string{"added", "general"}, r.m.Workers()[0].Agents)
	require.Len(t, again, 1, "the disposes during the request owe one more")
	require.Empty(t, asks(r.answerAgents(again[0], "general", "added")))

	a = asks(r.workerEvent("w1", "global.disposed", `{}`))
	require.Len(t, a, 1, "all of w1's instances were dropped")
	r.answerAgents(a[0], "general", "added", "later")
	eff := r.launchOnW1("c1", "later")
	require.Empty(t, asks(eff), "a listed agent launches without a request")
	reply := ofKind(eff, EffectToolReply)
	require.Len(t, reply, 1)
	require.Empty(t, reply[0].Error)
	require.Equal(t, "w1", r.m.task(reply[0].Metadata["taskId"].(string)).Worker)
}

// A launch w1's list refuses asks the list once more before it is refused: an agent added there
// whose dispose has not come yet then runs. Launches refused meanwhile wait for the same answer;
// an agent still missing is refused after one request, a failed request keeps the list it had.
func TestALaunchAWorkersListRefusesAsksTheListOnceMore(t *testing.T) {
	r := newAgentsRig(t)
	r.upWith("general")

	a := asks(r.launchOnW1("c1", "fresh"))
	require.Len(t, a, 1, "w1 is asked again before the launch is answered")
	eff := r.launchOnW1("c2", "missing")
	require.Empty(t, asks(eff), "a second launch waits for the same answer")
	require.Empty(t, ofKind(eff, EffectToolReply))
	require.Len(t, r.m.startingLaunches(), 2, "asyncagents_cancel(all) and a headless run see them")
	require.Equal(t, 2, r.m.launchesInFlight(batchID("ses_p", "msg_p")), "their batch counts them")
	eff = r.answerAgents(a[0], "general", "fresh")
	replies := ofKind(eff, EffectToolReply)
	require.Len(t, replies, 2)
	require.Empty(t, replies[0].Error, "the agent is there now: the task runs")
	require.Equal(t, "w1", r.m.task(replies[0].Metadata["taskId"].(string)).Worker)
	require.Equal(t, "c2", replies[1].CallID)
	require.Equal(t, `asyncagents_task: worker w1 has no agent "missing"; its agents: fresh, general. No task was created.`, replies[1].Error)
	require.Empty(t, asks(eff), "one request per refusal")

	a = asks(r.launchOnW1("c3", "missing"))
	require.Len(t, a, 1)
	eff = r.run(Event{Type: EventEffectDone, EffectID: a[0].ID, Error: "worker w1: listing its agents: timed out"})
	replies = ofKind(eff, EffectToolReply)
	require.Len(t, replies, 1)
	require.Contains(t, replies[0].Error, `worker w1 has no agent "missing"; its agents: fresh, general.`)
}
