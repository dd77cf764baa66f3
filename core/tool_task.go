package core

import (
	"encoding/json"
	"fmt"
	"github.com/asyncagents/asyncagents/core/task"
	"math"
	"reflect"
	"strings"

	"github.com/asyncagents/asyncagents/core/text"
)

// taskArgs are asyncagents_task's arguments.
type taskArgs struct {
	Description string `json:"description"`
	Prompt      string `json:"prompt"`
	Agent       string `json:"agent"`
	Resume      string `json:"resume"`
	Fork        bool   `json:"fork"`
	// Timeout is the task's wall-clock limit in seconds (taskTimeoutMs when absent).
	Timeout *float64 `json:"timeout"`
	// Budget is the task's limits over the config's defaults (budget.go).
	Budget *budgetArgs `json:"budget"`
	// Isolation is where the child works: "none" or "worktree" (worktree_tasks.go).
	Isolation string `json:"isolation"`
	// Worker is where it runs: a worker's name, "auto" or "local" (workers_launch.go).
	Worker string `json:"worker"`
}

// maxTaskTimeoutMs bounds asyncagents_task's timeout: a year, far past any real task, and well
// inside what a millisecond count and a host timer hold.
const maxTaskTimeoutMs = 365 * 24 * 3_600_000

// launch is a task launch between its tool call and the creation of its child session.
type launch struct {
	callID      string
	sessionID   string
	messageID   string
	parentAgent string
	args        taskArgs
	depth       int
	canDelegate bool
	fork        bool
	timeoutMs   int64
	budget      *task.Budget
	// cancelled by asyncagents_cancel(all) before the session existed.
	cancelled    bool
	cancelReason string
	// worker is where the launch was placed ("" local) once placed.
	worker string
	placed bool
	// checkedWorker: the worker whose health answered for it; a decision for another one asks
	// that one's.
	checkedWorker string
	// rechecked: its worker's list refused it once, and was asked again (workers_agents.go).
	rechecked bool
}

// parseArgs decodes tool arguments into v, naming the argument whose type is wrong.
func parseArgs(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		if te, ok := err.(*json.UnmarshalTypeError); ok && te.Field != "" {
			return fmt.Errorf(argTypeFmt, te.Field, jsonKind(te.Type.Kind().String()), te.Value)
		}
		return fmt.Errorf(argsNotObjectFmt, err)
	}
	return checkKeys(raw, reflect.TypeOf(v), "")
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "int", "int64", "float64", "float32", "int32":
		return "number"
	}
	return goKind
}

// validate checks the arguments of a fresh launch, naming every missing one.
func (a *taskArgs) validate() error {
	a.Description = strings.TrimSpace(a.Description)
	a.Agent = strings.TrimSpace(a.Agent)
	var missing []string
	if a.Description == "" {
		missing = append(missing, "description")
	}
	if strings.TrimSpace(a.Prompt) == "" {
		missing = append(missing, "prompt")
	}
	if a.Agent == "" {
		missing = append(missing, "agent")
	}
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf(taskArgMissingFmt, missing[0])
	default:
		return fmt.Errorf(taskArgsMissingFmt, strings.Join(missing, ", "))
	}
}

func (m *Machine) onTaskCall(ev Event) {
	var a taskArgs
	if err := parseArgs(ev.Args, &a); err != nil {
		m.failTool(ev.CallID, "asyncagents_task: "+err.Error()+"; no task was created")
		return
	}
	timeoutMs, given := m.cfg.TaskTimeoutMs, int64(0)
	if a.Timeout != nil {
		s := *a.Timeout
		if math.IsNaN(s) || math.IsInf(s, 0) || s <= 0 || s*1000 > maxTaskTimeoutMs {
			m.failTool(ev.CallID, fmt.Sprintf(taskBadTimeoutFmt, s))
			return
		}
		timeoutMs = max(int64(s*1000), 1)
		given = timeoutMs
	}
	budget, err := m.taskBudget(a.Budget)
	if err != nil {
		m.failTool(ev.CallID, err.Error())
		return
	}
	if m.refuseOverBudget(ev.CallID, ev.SessionID) {
		return
	}
	if strings.TrimSpace(a.Resume) != "" {
		if a.Isolation != "" {
			m.failTool(ev.CallID, isolationOnResume)
			return
		}
		if a.Worker != "" {
			m.failTool(ev.CallID, workerOnResume)
			return
		}
		m.onResumeCall(ev, a, given, budget)
		return
	}
	if err := a.validate(); err != nil {
		m.failTool(ev.CallID, err.Error())
		return
	}
	if err := m.launchIsolation(&a); err != nil {
		m.failTool(ev.CallID, err.Error())
		return
	}
	if err := m.launchWorker(&a); err != nil {
		m.failTool(ev.CallID, err.Error())
		return
	}
	l := &launch{callID: ev.CallID, sessionID: ev.SessionID, messageID: ev.MessageID, parentAgent: ev.Agent, args: a, depth: 1, fork: a.Fork, timeoutMs: timeoutMs, budget: budget}
	if p := m.taskBelow(ev.SessionID); p != nil {
		// A task's child launching tasks of its own, itself or through a subagent it ran with
		// OpenCode's task tool: only as deep as MaxDepth allows.
		l.depth = p.Depth + 1
		if l.depth > m.cfg.MaxDepth {
			m.failTool(ev.CallID, fmt.Sprintf(taskNestingFmt, text.CountOf(p.Depth, "level", "levels"), m.cfg.MaxDepth))
			return
		}
	}
	// The agent list is cached (and fetched when the host starts): asking OpenCode on every launch
	// would add a slow round trip to the launch. An agent missing from the cache refreshes it once
	// before failing; launches that arrive while a refresh is in flight wait for that one. An
	// agent the named worker lists needs no local refresh (workers_agents.go).
	if m.agentsKnown {
		if _, ok := m.findAgent(a.Agent); ok || m.listsAgent(a.Worker, a.Agent) {
			m.checkAgentAndLaunch(l)
			return
		}
	}
	m.agentWaiters = append(m.agentWaiters, l)
	m.fetchAgents()
}

// fetchAgents asks for the agent list unless a request is already in flight.
func (m *Machine) fetchAgents() {
	if m.agentsFetching {
		return
	}
	m.agentsFetching = true
	m.request(Effect{Kind: EffectAgentsList}, pending{})
}

func (m *Machine) findAgent(name string) (AgentInfo, bool) { return findIn(m.agents, name) }

// subagentNames lists the local agents a task may run, sorted.
func (m *Machine) subagentNames() []string { return subagentsOf(m.agents) }

func (m *Machine) onAgentsListed(ev Event) {
	m.agentsFetching = false
	waiting := m.agentWaiters
	m.agentWaiters = nil
	var agents []AgentInfo
	if !ev.OK {
		for _, l := range waiting {
			m.failTool(l.callID, taskAgentsUnlisted+ev.Error+"; no task was created")
		}
		return
	}
	if err := json.Unmarshal(ev.Result, &agents); err != nil {
		for _, l := range waiting {
			m.failTool(l.callID, taskAgentsUnreadable)
		}
		return
	}
	m.agents, m.agentsKnown = agents, true
	for _, l := range waiting {
		m.checkAgentAndLaunch(l)
	}
}

// checkAgentAndLaunch places the launch, checks the agent against the list of the place it goes
// to (a worker's own once it has answered, workers_agents.go), then creates the task and answers
// the tool call at once: the child session is created after the answer (startTask), so the
// launch never waits for OpenCode.
func (m *Machine) checkAgentAndLaunch(l *launch) {
	if !m.placeLaunch(l) {
		return
	}
	agents, where := m.agentsAt(l.worker)
	agent, ok := findIn(agents, l.args.Agent)
	if where != "" && (!ok || agent.Mode == "primary") && !l.rechecked {
		m.recheckAgents(where, l)
		return
	}
	available := strings.Join(subagentsOf(agents), ", ")
	switch {
	case !ok && where != "":
		m.failTool(l.callID, fmt.Sprintf(workerUnknownAgentFmt, where, quote(l.args.Agent), available))
		return
	case !ok:
		m.failTool(l.callID, fmt.Sprintf(taskUnknownAgentFmt, quote(l.args.Agent), available))
		return
	case agent.Mode == "primary" && where != "":
		m.failTool(l.callID, fmt.Sprintf(workerPrimaryAgentFmt, quote(l.args.Agent), where, available))
		return
	case agent.Mode == "primary":
		m.failTool(l.callID, fmt.Sprintf(taskPrimaryAgentFmt, quote(l.args.Agent), available))
		return
	}
	if !m.mayLaunch(l.parentAgent, l.args.Agent) {
		m.failTool(l.callID, fmt.Sprintf(taskDeniedAgentFmt, quote(l.parentAgent), quote(l.args.Agent), allowedList(m.allowedSubagents(l.parentAgent))))
		return
	}
	l.canDelegate = agent.CanDelegate()
	t := &run{
		Task: task.Task{
			ID:              m.mintTaskID(),
			ParentSessionID: l.sessionID,
			ParentMessageID: l.messageID,
			ParentAgent:     l.parentAgent,
			ParentTitle:     m.sessionTitle.get(l.sessionID),
			BatchID:         batchID(l.sessionID, l.messageID),
			Description:     l.args.Description,
			Prompt:          l.args.Prompt,
			Agent:           l.args.Agent,
			Worker:          l.worker,
			Status:          task.StatusRunning,
			StartedAt:       m.now,
			Progress:        task.Progress{LastTools: []string{}, LastUpdate: m.now},
			Depth:           l.depth,
			IsForked:        l.fork,
			TimeoutMs:       l.timeoutMs,
			Budget:          l.budget,
		},
		canDelegate: l.canDelegate,
	}
	if t.Worker != "" && !m.workerUp(t.Worker) && !m.resting(t.Worker) {
		m.armLost(t.Worker) // placed on its health's word: its stream must come up in time
	}
	m.isolate(t, l.args.Isolation)
	t.Models = m.resolveChain(t.Worker, t.Agent, l.sessionID)
	m.firstModel(t)
	m.tasks[t.ID] = t
	m.order = append(m.order, t.ID)
	m.storeChanged()
	m.indexTask(t)
	m.touch(t)
	meta := t.metadata(launchTitle(t))
	if l.cancelled {
		// Cancelled (asyncagents_cancel all) while the agent list was read: it never starts.
		t.Queued = true
		m.cancel(t, l.cancelReason)
		m.replyTool(l.callID, m.launchText(t), meta)
		return
	}
	if t.Worker != "" {
		m.wake(t.Worker) // a task queued there keeps its stream followed too
	}
	start := m.admit(t)
	m.replyTool(l.callID, m.launchText(t), meta)
	if start {
		m.startTask(t)
	}
	m.armPoll()
}

// createSession asks OpenCode for t's child session; startTask goes on when it exists.
func (m *Machine) createSession(t *run) {
	t.creating = true
	// A task restored from the history (it was queued) does not keep canDelegate: the agent
	// list says again.
	if a, ok := m.agentAt(t.Worker, t.Agent); ok {
		t.canDelegate = a.CanDelegate()
	}
	// A child on a worker has no parent there: the parent session is this machine's, and a
	// parentID the worker does not hold breaks OpenCode's task tool in the child, which walks
	// its session's parents to count its depth ("Session not found").
	parent := t.ParentSessionID
	if t.Worker != "" {
		parent = ""
	}
	m.request(Effect{
		Kind:       EffectSessionCreate,
		TaskID:     t.ID,
		ParentID:   parent,
		Title:      childTitle(t),
		Permission: childPermission(t.canDelegate),
		Metadata:   childMetadata(t.ID),
	}, pending{taskID: t.ID})
}

// childTitle is the title of t's child session.
func childTitle(t *run) string { return fmt.Sprintf(childSessionTitleFmt, t.Description, t.Agent) }

// onSessionCreated gives the task its session and starts it. A task that ended meanwhile (it
// was cancelled) gets no work: its session is deleted, so a cancel leaves nothing behind. A
// session that could not be created fails the task, with a notice that says why.
func (m *Machine) onSessionCreated(p pending, ev Event) {
	t := m.task(p.taskID)
	if t == nil {
		return
	}
	t.creating = false
	var created struct {
		ID      string `json:"id"`
		Created int64  `json:"created"`
	}
	if ev.OK {
		_ = json.Unmarshal(ev.Result, &created)
		m.noteWorkerClock(t.Worker, created.Created, p.at, m.now)
	}
	if !ev.OK || created.ID == "" {
		if t.Status.Terminal() {
			return
		}
		if !ev.OK && m.remoteDown(t) {
			m.log("warn", "task "+t.ID+": no session on a worker that is down, made at its return: "+ev.Error)
			return
		}
		reason := ev.Error
		if reason == "" {
			reason = "no session ID in the answer"
		}
		m.finish(t, task.StatusError, "", &task.TaskError{Name: "SessionError", Message: sessionErrorPrefix + reason})
		return
	}
	if t.Status.Terminal() {
		m.request(Effect{Kind: EffectSessionDelete, TaskID: t.ID, SessionID: created.ID}, pending{taskID: t.ID})
		return
	}
	m.bindSession(t, created.ID)
	m.touch(t)
	m.startTask(t)
}

// batchID groups the tasks launched from one parent message: one model turn's fan-out.
func batchID(sessionID, messageID string) string {
	if messageID == "" {
		return sessionID
	}
	return messageID
}

func (m *Machine) onPromptSent(p pending, ev Event) {
	t := m.task(p.taskID)
	if t == nil || t.Status.Terminal() {
		return
	}
	if !ev.OK && m.remoteDown(t) {
		// Its worker is down: the prompt may have arrived. The check at the worker's return
		// reads the session, and sends it again if it did not (prompt_dropped.go).
		m.log("warn", "task "+t.ID+": prompt on a worker that is down: "+ev.Error)
		t.promptSent, t.promptUnsure = true, true
		return
	}
	if !ev.OK {
		m.finish(t, task.StatusError, "", &task.TaskError{Name: "PromptError", Message: promptErrorPrefix + ev.Error})
		return
	}
	t.promptSent = true
}

// allowedList names the agents a refused launch could have used, or says there are none.
func allowedList(names []string) string {
	if len(names) == 0 {
		return taskNoAgentAllowed
	}
	return strings.Join(names, ", ")
}

func quote(s string) string { return fmt.Sprintf("%q", s) }
