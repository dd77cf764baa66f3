package core

import (
	"encoding/json"
	"fmt"
	"sort"
)

// A worker's agents are its own: its `opencode serve` reads its own config, so an agent may exist
// there and not here, or here and not there. A task placed on a worker is checked against the
// agents that worker lists (GET /agent in its directory), asked each time its stream comes up;
// until that answer is in (or when it failed), the local list stands in, as before workers had
// lists of their own, and OpenCode's own refusal after the launch remains the last word
// (docs/rationale/workers.md).

// askWorkerAgents asks worker name for its agents.
func (m *Machine) askWorkerAgents(name string) {
	m.request(Effect{Kind: EffectAgentsList, Worker: name, Remote: m.remote(name), Directory: m.cfg.Workers[name].Directory}, pending{worker: name})
}

// onWorkerAgents records a worker's agent list. A failed or unreadable answer keeps what was
// known: a worker that answered once has not lost its agents because one request failed.
func (m *Machine) onWorkerAgents(p pending, ev Event) {
	w := m.link(p.worker)
	if w == nil {
		return
	}
	var agents []AgentInfo
	if !ev.OK || json.Unmarshal(ev.Result, &agents) != nil {
		m.log("warn", fmt.Sprintf(workerAgentsUnlistedFmt, p.worker, ev.Error))
		return
	}
	w.agents, w.agentsKnown = agents, true
}

// knowsAgents reports whether place worker ("" the local OpenCode) has listed its agents.
func (m *Machine) knowsAgents(worker string) bool {
	if worker == "" {
		return m.agentsKnown
	}
	w := m.workers[worker]
	return w != nil && w.agentsKnown
}

// agentsAt is the agent list a task placed at worker is checked against: that worker's when it
// has answered, else the local one (where is then "").
func (m *Machine) agentsAt(worker string) (agents []AgentInfo, where string) {
	if worker != "" && m.knowsAgents(worker) {
		return m.workers[worker].agents, worker
	}
	return m.agents, ""
}

// agentAt is agent name as the place worker knows it.
func (m *Machine) agentAt(worker, name string) (AgentInfo, bool) {
	agents, _ := m.agentsAt(worker)
	return findIn(agents, name)
}

// listsAgent reports whether worker (a configured one's name) has answered with a list that holds
// agent name.
func (m *Machine) listsAgent(worker, name string) bool {
	_, ok := m.agentAt(worker, name)
	return worker != "" && m.knowsAgents(worker) && ok
}

// lacksAgent reports whether place worker ("" local) is known not to run agent name as a task's:
// its list is in, and the agent is missing from it or a primary one. "auto" passes such a place
// over.
func (m *Machine) lacksAgent(worker, name string) bool {
	a, ok := m.agentAt(worker, name)
	return m.knowsAgents(worker) && (!ok || a.Mode == "primary")
}

// findIn is agent name in agents.
func findIn(agents []AgentInfo, name string) (AgentInfo, bool) {
	for _, a := range agents {
		if a.Name == name {
			return a, true
		}
	}
	return AgentInfo{}, false
}

// subagentsOf lists the agents of agents that a task may run, sorted.
func subagentsOf(agents []AgentInfo) []string {
	var names []string
	for _, a := range agents {
		if a.Mode != "primary" {
			names = append(names, a.Name)
		}
	}
	sort.Strings(names)
	return names
}
