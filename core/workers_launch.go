package core

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/httpapi"
	"github.com/asyncagents/asyncagents/core/placement"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/core/worktree"
)

// Placement of a launch (docs/rationale/workers.md): asyncagents_task's worker argument, else the
// agent's `worker`, else local. package placement decides from the places' free slots and
// streams; the machine asks a worker's health first when its stream is not known up, and answers
// the launch after it.

// launchWorker resolves a fresh launch's placement and refuses a name the config does not hold.
func (m *Machine) launchWorker(a *taskArgs) error {
	a.Worker = strings.TrimSpace(a.Worker)
	if a.Worker == "" {
		a.Worker = m.cfg.Agents[a.Agent].Worker
	}
	if why := m.cfg.CheckPlacement(a.Worker); why != "" {
		return fmt.Errorf("asyncagents_task: %s; no task was created", why)
	}
	return nil
}

// places are the workers as placement sees them, in name order: stream up, free slots.
func (m *Machine) places() (localFree int, out []placement.Place) {
	l := m.limits()
	u := l.InUse(records(m.slotTasks()))
	for _, name := range m.cfg.WorkerNames() {
		out = append(out, placement.Place{Name: name, Up: m.workerUp(name) || m.waking(name), Resting: m.restingReachable(name), Free: l.Workers[name] - u.ByWorker[name]})
	}
	return l.MaxStarts - u.Total, out
}

// placesFor are the places "auto" may pick for a task of agent: one known not to run the agent
// (workers_agents.go) is passed over, a worker as if down, the local machine as if full.
func (m *Machine) placesFor(agent string) (localFree int, out []placement.Place) {
	localFree, out = m.places()
	for i := range out {
		lacks := m.lacksAgent(out[i].Name, agent)
		out[i].Up, out[i].Resting = out[i].Up && !lacks, out[i].Resting && !lacks
	}
	if m.lacksAgent("", agent) {
		localFree = math.MinInt32
	}
	return localFree, out
}

// autoPlace is where "auto" puts a task of agent now.
func (m *Machine) autoPlace(agent string) string {
	return placement.Auto(m.placesFor(agent))
}

// placeLaunch decides where l runs; false while a health check of its worker is under way (the
// launch is answered when it comes back, onWorkerHealth).
func (m *Machine) placeLaunch(l *launch) bool {
	if l.placed {
		return true
	}
	free, ws := m.places()
	if l.args.Worker == config.WorkerAuto {
		free, ws = m.placesFor(l.args.Agent)
	}
	d := placement.Decide(l.args.Worker, free, ws)
	if d.Check && l.checkedWorker != d.Worker {
		m.request(Effect{Kind: EffectWorkerHealth, Worker: d.Worker, Remote: m.remote(d.Worker)}, pending{worker: d.Worker, launch: l})
		return false
	}
	l.worker, l.placed = d.Worker, true
	return true
}

// isolateLocal gives t (placed locally) a local worktree's names.
func (m *Machine) isolateLocal(t *run) {
	t.Worktree = &task.Worktree{Path: worktree.Path(m.wt.folder, t.ID), Branch: worktree.Branch(t.ID)}
	m.wt.launched = mapWith(m.wt.launched, t.ID)
}

// stampRemote sends a session effect of a task on a worker to that worker: its name, how to
// reach it, and the directory there (its clone, or the task's worktree in it).
func (m *Machine) stampRemote(e Effect, t *run) Effect {
	e.Worker, e.Remote, e.Directory = t.Worker, m.remote(t.Worker), m.sessionDir(t)
	return e
}

// WorkerInfo is a worker as GET /v1/workers and `asyncagents workers` show it: never its
// password, which the core never has.
type WorkerInfo struct {
	Name         string `json:"name"`
	URL          string `json:"url"`
	State        string `json:"state"`
	Error        string `json:"error"`
	Version      string `json:"version"`
	Running      int    `json:"running"`
	Queued       int    `json:"queued"`
	MaxTasks     int    `json:"maxTasks"`
	LastChangeAt int64  `json:"lastChangeAt"`
	// Agents are the agents a task may run there, as the worker listed them (absent until it has).
	Agents []string `json:"agents,omitempty"`
	// Health is what a read-only view (asyncagents serve, whose State is "not followed") heard
	// from the worker's GET /global/health, or the plugin while the worker rests (State
	// "resting"): "reachable", "unreachable" (HealthError says why) or "unknown" before its
	// first answer; since HealthSince, last asked at HealthAt. Left out while the plugin follows
	// the worker's stream: its State says more.
	Health      string `json:"health,omitempty"`
	HealthError string `json:"healthError,omitempty"`
	HealthSince int64  `json:"healthSince,omitempty"`
	HealthAt    int64  `json:"healthAt,omitempty"`
	// PollMs: the worker is polled every PollMs instead of followed (its config's pollMs): its
	// State then goes by its health asks.
	PollMs int64 `json:"pollMs,omitempty"`
}

// Workers lists the configured workers, sorted by name, with their state and load.
func (m *Machine) Workers() []WorkerInfo {
	out := []WorkerInfo{}
	active := m.activeTasks()
	for _, name := range m.cfg.WorkerNames() {
		w := m.cfg.Workers[name]
		info := WorkerInfo{Name: name, URL: w.URL, State: WorkerUnknown, MaxTasks: w.MaxTasks, PollMs: w.PollMs}
		if l := m.workers[name]; l != nil {
			info.State, info.Error, info.Version, info.LastChangeAt = l.state, l.err, l.version, l.lastChangeAt
			if l.agentsKnown {
				info.Agents = subagentsOf(l.agents)
			}
		}
		if m.cfg.API.ReadOnly {
			m.probed(&info)
		} else if l := m.workers[name]; l != nil && l.resting {
			p := l.probe
			info.Health, info.HealthError, info.HealthSince, info.HealthAt = p.health, p.err, p.since, p.at
		}
		for _, t := range active {
			switch {
			case t.Worker != name:
			case t.Queued:
				info.Queued++
			default:
				info.Running++
			}
		}
		out = append(out, info)
	}
	return out
}

// isWorkersRoute reports whether path is GET /v1/workers's (a query may ride in the path).
func isWorkersRoute(path string) bool {
	path, _, _ = strings.Cut(path, "?")
	return strings.TrimSuffix(path, "/") == "/v1/workers"
}

// workersBody is GET /v1/workers's answer.
func (m *Machine) workersBody() string {
	b, err := json.Marshal(struct {
		Workers []WorkerInfo `json:"workers"`
	}{m.Workers()})
	if err != nil {
		return `{"workers":[]}`
	}
	return string(b)
}

// anyRemote reports whether any of tasks ran on a worker.
func anyRemote(tasks []task.Task) bool {
	for i := range tasks {
		if tasks[i].Worker != "" {
			return true
		}
	}
	return false
}

// cellOr is s, or none when s is empty.
func cellOr(s, none string) string {
	if s == "" {
		return none
	}
	return s
}

// readOnWorker sends the host to a worker for the messages of a remote task's session (the
// status API's logs and conversation).
func (m *Machine) readOnWorker(r *httpapi.Response) {
	session := r.Logs
	if session == "" {
		session = r.Messages
	}
	if session == "" {
		return
	}
	if t := m.task(session); t != nil && t.Worker != "" {
		r.Worker, r.Remote, r.Directory = t.Worker, m.remote(t.Worker), m.sessionDir(t)
	}
}
