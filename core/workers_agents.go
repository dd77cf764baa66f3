package core

import (
	"encoding/json"
	"fmt"
	"sort"
)

// A worker's agents are its own: its `opencode serve` reads its own config, so an agent may exist
// there and not here, or here and not there. A task placed on a worker is checked against the
// agents that worker lists (GET /agent in its directory), asked each time its stream comes up and
// each time OpenCode there drops its instance of that directory or all of them (a config update
// through its API, or a dispose: server.instance.disposed, global.disposed), which is when it
// reads its config afresh. A launch that list refuses asks it once more before it is refused.
// Until an answer is in (or when it failed), the local list stands in, as before workers had
// lists of their own, and OpenCode's own refusal after the launch remains the last word
// (docs/rationale/workers.md).

// askWorkerAgents asks worker name for its agents. One ask is in flight at a time: one asked for
// meanwhile goes when it answers, since that answer may predate what made it needed.
func (m *Machine) askWorkerAgents(name string) {
	w := m.link(name)
	if w == nil {
		return
	}
	if w.agentsAsking {
		w.agentsAgain = true
		return
	}
	w.agentsAsking = true
	m.request(Effect{Kind: EffectAgentsList, Worker: name, Remote: m.remote(name), Directory: m.cfg.Workers[name].Directory}, pending{worker: name})
}

// recheckAgents holds launch l, which worker's list refused, until the worker has listed its
// agents again (a list in flight will do): an agent added there since the last answer, whose
// event has not come yet, then runs rather than being refused.
func (m *Machine) recheckAgents(worker string, l *launch) {
	w := m.link(worker)
	l.rechecked = true
	w.agentWaiters = append(w.agentWaiters, l)
	if !w.agentsAsking {
		m.askWorkerAgents(worker)
	}
}

// onWorkerDisposed asks worker name for its agents again when its OpenCode dropped an instance,
// or all of them: the next request reads the config again, and an agent may have come or gone.
// Any instance of that worker, not only one named as the config names the directory: OpenCode
// names it resolved (symlinks followed), which a path from the config may not be, and this
// machine cannot resolve a path of the worker's. Another directory's dispose (a task's worktree
// there) costs one GET /agent, and the requests are one at a time.
func (m *Machine) onWorkerDisposed(name string) {
	if _, ok := m.cfg.Workers[name]; ok {
		m.askWorkerAgents(name)
	}
}

// onWorkerAgents records a worker's agent list and answers the launches that waited for it. A
// failed or unreadable answer keeps what was known: a worker that answered once has not lost its
// agents because one request failed.
func (m *Machine) onWorkerAgents(p pending, ev Event) {
	w := m.workers[p.worker]
	if w == nil {
		return
	}
	w.agentsAsking = false
	var agents []AgentInfo
	if !ev.OK || json.Unmarshal(ev.Result, &agents) != nil {
		m.log("warn", fmt.Sprintf(workerAgentsUnlistedFmt, p.worker, ev.Error))
	} else {
		w.agents, w.agentsKnown = agents, true
	}
	waiting := w.agentWaiters
	w.agentWaiters = nil
	for _, l := range waiting {
		m.checkAgentAndLaunch(l)
	}
	if w.agentsAgain {
		w.agentsAgain = false
		m.askWorkerAgents(p.worker)
	}
}

// workerAgentWaiters are the launches waiting for a worker's list, by worker name.
func (m *Machine) workerAgentWaiters() []*launch {
	var out []*launch
	for _, name := range m.cfg.WorkerNames() {
		if w := m.workers[name]; w != nil {
			out = append(out, w.agentWaiters...)
		}
	}
	return out
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
