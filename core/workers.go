package core

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/errclass"
	"github.com/asyncagents/asyncagents/core/ocevents"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/core/view"
)

// Workers: tasks placed on another machine's `opencode serve` (docs/rationale/workers.md). The
// host keeps one event stream per worker open (worker.follow) and tells the machine its state
// (worker.state); the machine decides everything else: where a task goes (workers_launch.go),
// which of a worker's events concern which task, when a worker counts as lost and what then
// becomes of its tasks.

// Worker states, as GET /v1/workers names them.
const (
	WorkerUp      = "up"
	WorkerDown    = "down"
	WorkerUnknown = "unknown"
)

// workerLostPrefix names the timer that declares a worker lost after its lostAfterMs down.
const workerLostPrefix = "worker.lost:"

// workerLink is what the machine knows of a worker's stream.
type workerLink struct {
	state        string
	err          string
	version      string
	lastChangeAt int64
	lostArmed    bool
	// agents: the worker's own agent list, once it answered (agentsKnown; workers_agents.go);
	// agentsAsking while a request for it is in flight, agentsAgain when another is owed after
	// it; agentWaiters, the launches its list refused, waiting for its next answer.
	agents                    []AgentInfo
	agentsKnown               bool
	agentsAsking, agentsAgain bool
	agentWaiters              []*launch
	// swept: its worktrees were asked for after the restore, listed: the answer came
	// (workers_worktree_restart.go).
	swept, listed bool
	// probe: what a read-only view heard from its health (workers_probe.go), or this parent
	// while the worker rests.
	probe probe
	// resting: its stream is closed on purpose (workers_rest.go); inUse: it held a task of this
	// parent at the last step that changed tasks, idleSince: when it last stopped holding one,
	// restArmed: its rest timer runs.
	resting, inUse, restArmed bool
	// waking: followed again for a task, its stream not up yet; "auto" counts it as up (its
	// health answered), the lost timer holds it to coming up.
	waking    bool
	idleSince int64
	// permReads: the latest read of its pending permission requests, by directory; an older
	// read's answer is not taken (workers_permissions.go).
	permReads map[string]int64
	// A polled worker's health is not asked at a tick after its status read answered
	// (workers_poll.go): answeredAt, tickedAt and healthAskedAt say whether one did.
	answeredAt, tickedAt, healthAskedAt int64
}

// link is the record of a configured worker (nil for a name the config does not hold).
func (m *Machine) link(name string) *workerLink {
	if _, ok := m.cfg.Workers[name]; !ok {
		return nil
	}
	if m.workers == nil {
		m.workers = map[string]*workerLink{}
	}
	w := m.workers[name]
	if w == nil {
		w = &workerLink{state: WorkerUnknown}
		m.workers[name] = w
	}
	return w
}

// workerUp reports whether name's stream is connected.
func (m *Machine) workerUp(name string) bool {
	w := m.link(name)
	return w != nil && w.state == WorkerUp
}

// remote is how a host reaches worker name: its URL and the name of its password's variable,
// never the password, which the core never has.
func (m *Machine) remote(name string) *Remote {
	w, ok := m.cfg.Workers[name]
	if !ok {
		return nil
	}
	return &Remote{URL: w.URL, Username: w.Username, PasswordEnv: w.PasswordEnv, Insecure: w.Insecure}
}

// followWorkers asks the host, at start, to follow every configured worker's stream.
func (m *Machine) followWorkers() {
	for _, name := range m.cfg.WorkerNames() {
		m.link(name).idleSince = m.now
		if m.polled(name) {
			m.startPolling(name) // workers_poll.go
			continue
		}
		m.emit(Effect{Kind: EffectWorkerFollow, Worker: name, Remote: m.remote(name), Follow: &workerFollowRule})
	}
	m.failUnconfigured()
}

// onWorkerState records a worker's stream going up or down. Up clears the lost timer, asks the
// version, and checks each task there as the poll does (an end may have passed while it was
// down); down arms the lost timer (lostAfterMs).
func (m *Machine) onWorkerState(ev Event) {
	w := m.link(ev.Worker)
	if w == nil {
		m.log("warn", fmt.Sprintf("state of unknown worker %q ignored", ev.Worker))
		return
	}
	if w.resting {
		return // fed before its stream was closed: the worker rests
	}
	w.waking = false
	state := WorkerDown
	if ev.Up {
		state = WorkerUp
	}
	if w.state != state {
		w.lastChangeAt = m.now
		m.storeChanged()
	}
	w.state, w.err = state, ev.Error
	if ev.Up {
		w.err = ""
		if w.lostArmed {
			w.lostArmed = false
			m.emit(Effect{Kind: EffectTimerClear, TimerID: workerLostPrefix + ev.Worker})
		}
		m.request(Effect{Kind: EffectWorkerHealth, Worker: ev.Worker, Remote: m.remote(ev.Worker)}, pending{worker: ev.Worker})
		m.askWorkerAgents(ev.Worker)
		m.sweepWorker(ev.Worker)
		m.recheckWorker(ev.Worker)
		m.askWorkerPermissions(ev.Worker)
		m.startQueued()
		return
	}
	m.log("warn", fmt.Sprintf("worker %s is down: %s", ev.Worker, ev.Error))
	m.armLost(ev.Worker)
}

// armLost starts name's lostAfterMs unless it runs already: its stream is down, or a task was
// placed on it while its stream was not up (its health answered), and it must come up in time.
func (m *Machine) armLost(name string) {
	if w := m.link(name); w != nil && !w.lostArmed {
		w.lostArmed = true
		m.emit(Effect{Kind: EffectTimerSet, TimerID: workerLostPrefix + name, DelayMs: m.cfg.Workers[name].LostAfterMs})
	}
}

// recheckWorker reads the status of the worker's sessions, for each directory its tasks use:
// a task OpenCode no longer lists as busy gets its messages read (onStatus).
//
// A task restored from the history is reconciled here instead, as the local ones are at the
// restore (history_reconcile.go): its status and messages say whether it ended meanwhile.
func (m *Machine) recheckWorker(name string) {
	seen := map[string]bool{}
	restored := map[string][]string{}
	var dirs []string
	for _, id := range m.running() {
		t := m.tasks[id]
		if t == nil || t.Worker != name || t.Queued || t.creating {
			continue
		}
		if t.SessionID == "" { // its session could not be made while the worker was down
			m.startTask(t)
			continue
		}
		dir := m.sessionDir(t)
		if t.restoring {
			t.restoring = false
			if _, ok := restored[dir]; !ok {
				dirs = append(dirs, dir)
			}
			restored[dir] = append(restored[dir], t.ID)
			continue
		}
		if !seen[dir] {
			seen[dir] = true
			if m.polled(name) && m.statusAsked(name, dir) {
				continue // the last tick's read is still out: a slow worker's reads do not pile up
			}
			m.request(m.statusRead(name, dir), pending{worker: name, wt: &wtPending{dir: dir}})
		}
	}
	for _, dir := range dirs {
		m.reconcileOn(name, dir, restored[dir])
	}
}

// statusRead is the read of the session statuses of place (a worker, or "" the local OpenCode)
// in directory dir there (its clone, or a task's worktree in it).
func (m *Machine) statusRead(place, dir string) Effect {
	if place == "" {
		return Effect{Kind: EffectStatus}
	}
	return Effect{Kind: EffectStatus, Worker: place, Remote: m.remote(place), Directory: dir}
}

// reconcileOn reads the statuses where the restored tasks ids run, to end each as its child says
// (history_reconcile.go).
func (m *Machine) reconcileOn(place, dir string, ids []string) {
	m.request(m.statusRead(place, dir), pending{worker: place, reconcile: ids})
}

// stillRestoring keeps restored tasks whose worker's status read failed for its next check.
func (m *Machine) stillRestoring(ids []string, why string) {
	for _, id := range ids {
		if t := m.task(id); t != nil && !t.Status.Terminal() {
			t.restoring = true
		}
	}
	m.log("warn", "session.status of a worker failed at the reconcile, asked again at its next check: "+why)
	m.armPoll()
}

// pollWorkers is the poll's status read on each worker that is up, once per directory in use.
func (m *Machine) pollWorkers() {
	for _, name := range m.cfg.WorkerNames() {
		if m.workerUp(name) && !m.polled(name) { // a polled worker's own timer reads it
			m.recheckWorker(name)
		}
	}
}

// sessionDir is the directory t's session works in, on its worker or locally.
func (m *Machine) sessionDir(t *run) string {
	if t.Worker == "" {
		return worktreeDir(t)
	}
	if w := t.Worktree; w != nil && w.WorkerPath != "" && w.Unmerged() {
		return w.WorkerPath
	}
	return m.cfg.Workers[t.Worker].Directory
}

// healthAnswer is worker.health's result (ABI.md); read says whether it parsed.
type healthAnswer struct {
	Healthy bool   `json:"healthy"`
	Version string `json:"version"`
	Date    int64  `json:"date"`
	read    bool
}

// onWorkerHealth records a worker's version and clock, or answers the launch that waited for it.
func (m *Machine) onWorkerHealth(p pending, ev Event) {
	var h healthAnswer
	if ev.OK && json.Unmarshal(ev.Result, &h) == nil {
		h.read = true
		m.noteWorkerDate(p.worker, h.Date, p.at, m.now)
	}
	if p.polling {
		m.onPolledHealth(p.worker, ev, h)
		return
	}
	if p.probe {
		m.onProbed(p.worker, ev, h)
		return
	}
	if p.launch != nil {
		if m.resting(p.worker) {
			m.onProbed(p.worker, ev, h) // what "auto" and the table go by while it rests
		}
		if p.launch.args.Worker == config.WorkerAuto && (!ev.OK || !h.read || !h.Healthy) {
			// "auto" picked a resting worker that does not answer as healthy: placed again, that
			// worker out of reach now (or, woken meanwhile by another launch, taken as it is).
			m.checkAgentAndLaunch(p.launch)
			return
		}
		if !ev.OK {
			m.failTool(p.launch.callID, fmt.Sprintf(workerUnreachableFmt, p.worker, ev.Error))
			return
		}
		p.launch.checkedWorker = p.worker
		m.checkAgentAndLaunch(p.launch)
		return
	}
	if w := m.link(p.worker); w != nil && h.read && h.Version != w.version {
		w.version = h.Version
		m.storeChanged()
	}
}

// onStreamEvent takes an event of a stream (a worker's, or "" the local OpenCode's) for the
// tasks of that place only: a worker's event about any other session (the worker's own users,
// another parent's) changes nothing here, nor does a local one about a remote task's session.
func (m *Machine) onStreamEvent(name string, e OpenCodeEvent) {
	if name != "" && !workerReads[e.Type] {
		return // a host that passes on what the rule's Types leave out: not decoded either
	}
	sid := ""
	decoded := ocevents.Decode(e.Type, e.Properties) // once: the handler takes it as it is
	switch p := decoded.(type) {
	case ocevents.SessionIdle:
		sid = p.SessionID
	case ocevents.SessionStatus:
		sid = p.SessionID
	case ocevents.SessionError:
		sid = p.SessionID
	case ocevents.SessionDeleted:
		sid = p.Info.ID
	case ocevents.SessionCompacted:
		sid = p.SessionID
	case ocevents.SessionCreated:
		sid = p.Info.ParentID
	case ocevents.PermissionAsked:
		sid = p.SessionID
	case ocevents.PermissionReplied:
		sid = p.SessionID
	case ocevents.SessionUpdated:
		sid = p.Info.ID
	case ocevents.MessageUpdated:
		sid = p.Info.SessionID
	case ocevents.PartUpdated:
		sid = p.Part.SessionID
	case ocevents.InstanceDisposed, ocevents.GlobalDisposed:
		m.onWorkerDisposed(name)
		return
	}
	t := m.taskBelow(sid)
	if (t == nil && name == "") || (t != nil && t.Worker == name) {
		m.onDecoded(decoded)
	} else if t == nil {
		m.onUntracedEvent(name, decoded) // a session not seen created (workers_trace.go)
	}
}

// onWorkerLost fires lostAfterMs after a worker's stream went down: if it is still down, each
// task at work there fails, keeping the partial work it streamed, or with rerunLost starts again
// elsewhere as a new attempt.
func (m *Machine) onWorkerLost(name string) {
	w := m.link(name)
	if w == nil || !w.lostArmed {
		return
	}
	w.lostArmed = false
	if w.state == WorkerUp {
		return
	}
	reason := w.err
	switch {
	case reason != "":
	case w.state == WorkerUnknown:
		reason = workerNeverUp
	default:
		reason = workerStreamDown
	}
	m.starts.Begin()
	for _, id := range m.running() {
		t := m.tasks[id]
		if t == nil || t.Worker != name || t.Queued {
			continue
		}
		if m.cfg.Workers[name].RerunLost {
			m.rerunElsewhere(t, name, reason)
			continue
		}
		m.failLost(t, fmt.Sprintf(workerLostFmt, name, reason))
	}
	if m.starts.End() {
		m.startQueued()
	}
}

// failLost fails t, whose worker is gone, with msg; its partial work stays on the task.
func (m *Machine) failLost(t *run, msg string) {
	e := &task.TaskError{Name: "WorkerLost", Message: msg}
	if t.FallbackInfo != nil {
		m.endAttempt(t, false, e, errclass.ErrNetwork)
	}
	m.finish(t, task.StatusError, "", e)
}

// rerunElsewhere starts t again, as a new attempt on a new session, at the place with the most
// free slots (the lost worker is down, so never it).
func (m *Machine) rerunElsewhere(t *run, lost, reason string) {
	m.log("warn", fmt.Sprintf("task %s: worker %s was lost (%s); starting it again", t.ID, lost, reason))
	if t.SessionID != "" && t.SessionID != t.ID {
		delete(m.sessions, t.SessionID)
	}
	t.SessionID, t.promptSent, t.msg, t.sessionError = "", false, nil, nil
	if t.Worktree != nil && t.Worktree.WorkerPath != "" {
		t.Worktree.WorkerPath, t.Worktree.Base = "", ""
	}
	t.Worker = m.autoPlaceFollowed(t.Agent)
	if t.Worker == "" && t.Worktree != nil {
		m.isolateLocal(t)
	}
	t.StartedAt = m.now
	m.touch(t)
	m.storeChanged()
	if m.admit(t) {
		m.startTask(t)
	}
}

// failUnconfigured fails the tasks at work on a worker the config no longer names: nothing can
// reach them.
func (m *Machine) failUnconfigured() {
	for _, id := range m.running() {
		t := m.tasks[id]
		if t == nil || t.Worker == "" {
			continue
		}
		if _, ok := m.cfg.Workers[t.Worker]; !ok {
			t.restoring = false
			m.failLost(t, fmt.Sprintf(workerGoneFmt, t.Worker))
		}
	}
}

// remoteDown reports whether t runs on a worker whose stream is not up: a request that fails
// then fails no task, which lostAfterMs decides.
func (m *Machine) remoteDown(t *run) bool { return t.Worker != "" && !m.workerUp(t.Worker) }

// workerSuffix is " on worker w1" for a task on a worker, "" for a local one.
func workerSuffix(t *task.Task) string {
	if t.Worker == "" {
		return ""
	}
	return " " + view.OnWorker(t.Worker) // the rows' and the dashboard's words too
}

// workerNames lists the configured workers for a refusal.
func workerNames(cfg config.Config) string { return strings.Join(cfg.WorkerNames(), ", ") }
