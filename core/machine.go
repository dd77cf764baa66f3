package core

import (
	"fmt"
	"sort"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/httpapi"
	"github.com/asyncagents/asyncagents/core/outbox"
	"github.com/asyncagents/asyncagents/core/slots"
	"github.com/asyncagents/asyncagents/core/task"
)

// Machine is the task store and the state machine over it. It is not safe for concurrent use:
// hosts serialise calls (the wasm instance is single-threaded anyway).
type Machine struct {
	cfg config.Config
	now int64
	// wt is what isolated tasks need of the project (worktree_tasks.go).
	wt worktreeState
	// configError is set when a config file is invalid (core/config/file.go): asyncagents_task then
	// fails with it, and the other tools work on.
	configError string
	// streamsClosed: the host said no status API event stream is open (api_streams.go).
	streamsClosed bool

	tasks map[string]*run
	order []string // task IDs in launch order, for listings
	// view is order resolved to tasks, for the status API: rebuilt only after the store's
	// membership or order changed (storeChanged), not on every request. Resolving 10,000 IDs
	// through the map on every GET cost most of a request's time inside WebAssembly.
	view []*run
	// viewTasks is view's records, for the status API (apiTasks).
	viewTasks []*task.Task
	// apiCache holds recent answers to task reads while the store is unchanged (httpapi.Cache);
	// changes counts the entry points that may have changed the store (Step, Restore, Follow).
	apiCache httpapi.Cache
	changes  uint64
	// apiCodes are the dashboard's one-time codes not yet traded (httpapi.Codes).
	apiCodes httpapi.Codes

	// sessions maps a child session's ID to its task's, where they differ (taskid.go);
	// sessionsStale: a restore brought tasks in since it was built.
	sessions      map[string]string
	sessionsStale bool
	// idSeed is the host's random seed for task IDs, idSeq the IDs minted so far (taskid.go).
	idSeed string
	idSeq  uint64

	agents         []AgentInfo
	agentsKnown    bool
	agentsFetching bool
	agentWaiters   []*launch // launches waiting for the agent list

	nextEffect int64
	pending    map[int64]pending  // effects awaiting effect.done
	waiters    map[string]*waiter // asyncagents_output(block) calls, by call ID
	pollArmed  bool

	busy map[string]bool // sessions known to be busy (a parent gets noReply notices only when idle)
	// sessionsBelow maps a session created under another to its parent session, to trace
	// a permission request there to its task, and a launch or a cost to the tasks above (permission.go).
	sessionsBelow sessionParents
	// repliedUnseen: requests whose permission.replied came for a task that held no mark of them
	// (asked while a worker's stream was down); a list of the worker's requests read before that
	// answer must not mark them (workers_permissions.go). Bounded by maxSessionsBelow.
	repliedUnseen map[string]bool
	// traces are the walks up a worker's sessions under way, untraced the sessions known to lead
	// to none of the tasks (workers_trace.go).
	traces   map[string]*trace
	untraced map[string]bool
	// walkHeld: when a walk from a session last failed, or ended unremembered (its spending starts
	// none for a while: workers_trace.go).
	walkHeld map[string]int64
	// workerClocks: what is known of each worker's clock against ours (clock.go).
	workerClocks map[string]clockRange
	// compactedAt is when each parent was last compacted (compaction.go); not persisted.
	compactedAt map[string]int64
	// outbox holds the notices owed to each parent until OpenCode accepts them, and the parents
	// whose outbox is looked at when the step ends (outbox.go).
	outbox outbox.Boxes[notice]
	// gathering: parents whose end notices wait for reads out on polled workers, with when the
	// wait began (workers_poll_gather.go).
	gathering map[string]int64
	// headless follows the held turn ends of a non-interactive run (headless.go).
	headless headlessState

	dirty map[string]bool // tasks changed in this step, persisted at its end
	// progressed: tasks whose progress alone changed in this step (shown on the event streams);
	// progressHeld: those whose progress is still to be written, when progressArmed's timer fires;
	// progressFramed: those the timer's step writes, whose frames went out with each change
	// (history_progress.go).
	progressed     map[string]bool
	progressHeld   map[string]bool
	progressFramed map[string]bool
	progressArmed  bool
	historyLines   int     // lines in the history log, for compaction
	size           logSize // its bytes, for compaction too (history_size.go)
	// tornTail: the log restored did not end its last line (a disk full, a power loss), so the
	// first line appended after it starts with a newline that ends it (history.go).
	tornTail     bool
	pendingIndex *indexSnapshot // the history index to write when its timer fires (history_index.go)
	store        storageState   // whether the history can be written (storage_fault.go)
	// reconcileRetry holds the restored tasks whose status read failed, to be asked again when
	// reconcileTimer fires; reconcileTries counts the reads that failed (history.go).
	reconcileRetry []string
	reconcileTries int
	index          taskIndex // active tasks and batches, so one event's work stays small

	health       map[string]*modelHealth // the circuit breaker's record per model (health.go)
	sessionModel sessionModels           // each session's latest assistant model, "provider/model" (bounds.go)
	// sessionTitle is each session's title as OpenCode last announced it (session.updated), in
	// the same bounded map: a batch is named by its parent's (core/view).
	sessionTitle sessionModels

	// others holds the tasks of the project's other processes, one machine per log they write
	// (history_files.go): shown by the status API, never acted on. merged names the adopted logs
	// the next restore reads after the own log, to fold into it.
	others map[string]*Machine
	merged []string
	// followMarks: where each followed log was read to; followPending: the reads looks asked
	// for, whose bytes are still to come (follow_look.go).
	followMarks   map[string]followMark
	followPending map[string]followPending

	// workers: what the machine knows of each worker's stream (workers.go).
	workers map[string]*workerLink
	// sweepDue: a restore found tasks, so each worker's worktrees are listed once it is up
	// (workers_worktree_restart.go).
	sweepDue bool
	// probing: a read-only view asks each worker's health (workers_probe.go).
	probing bool

	// starts holds the start queue while stops that end several tasks at once are under way
	// (stop_together.go).
	starts slots.Hold

	out []Effect
}

// pending is what the machine must do when an effect it asked for comes back.
type pending struct {
	kind   string
	taskID string
	// idle is set when the check was started by an idle signal, which means the child's turn
	// is over whatever its messages say.
	idle bool
	// quiet is set on a read asked because the child's OpenCode no longer lists it busy (poll.go):
	// on a polled worker, the read that takes its end (workers_poll_settle.go).
	quiet bool
	// notice marks the delivery of notices to a parent, and outbox names that parent (or the
	// parent whose messages a restore reads before delivering: outbox.go).
	notice  bool
	outbox  string
	notices []notice
	resume  *resumeReq
	// fork marks the read of a parent's conversation for a forked task; forkContext the
	// delivery of that context to the child.
	fork, forkContext bool
	// reconcile lists restored tasks awaiting a status read; restored marks their messages
	// read, busy whether OpenCode listed the child as busy.
	reconcile      []string
	restored, busy bool
	// compact marks a session.summarize after a context-length error; switchModel the abort
	// that leaves a failing model (fallback.go).
	compact, switchModel bool
	// attemptAt is the task's attemptAt when a read of its messages was asked for: an answer
	// for an attempt since left says nothing about the current one.
	attemptAt int64
	// at is when the effect was asked for: one unanswered for pendingTimeoutMs is given up.
	at int64
	// storageRetry marks the sync after a rewrite that retries a failed write (storage_fault.go).
	storageRetry bool
	// wt: a worktree effect's tool call, or a status read's directory (worktree_tasks.go).
	wt *wtPending
	// probe marks a read-only view's ask of a worker's health (workers_probe.go), polling a
	// polled worker's (workers_poll.go).
	probe, polling bool
	// progress marks a read of a polled task's newest messages for its progress
	// (workers_poll_progress.go).
	progress bool
	// sub: the subagent session a read of a polled task's messages is of
	// (workers_poll_subagents.go).
	sub string
	// settleEnd marks the read of an ended polled task's whole conversation for what it spent
	// last, naming that end (its CompletedAt: workers_poll_settle.go).
	settleEnd int64
	// answered: on a permission.reply, the request and the answer sent.
	answered *answeredPermission
	// worker: the worker a status read or health check went to; launch, the launch a health
	// check holds (workers_launch.go).
	worker string
	launch *launch
	// asked: on a read of a worker's pending permission requests, those its tasks there were
	// marked waiting on when it was sent (workers_permissions.go).
	asked []string
	// trace: a session.get of a walk up a worker's sessions (workers_trace.go).
	trace *trace
}

// waiter is an asyncagents_output(block: true) call waiting for its task to finish.
type waiter struct {
	callID string
	taskID string
	page   page // the part of the result it asked for
}

// pollTimer is the one timer that drives the polling fallback.
const pollTimer = "poll"

// NewMachine returns an empty machine with cfg (zero fields take defaults).
func NewMachine(cfg config.Config) *Machine {
	return &Machine{
		cfg:     cfg.WithDefaults(),
		tasks:   map[string]*run{},
		pending: map[int64]pending{},
		waiters: map[string]*waiter{},
		busy:    map[string]bool{},
	}
}

// Setup is what a host's init gives a machine besides its Config.
type Setup struct {
	// ConfigError is set when a config file is invalid (core/config/file.go): asyncagents_task
	// then fails with it, and the other tools work on.
	ConfigError string
	// Seed is the host's random seed for task IDs (taskid.go).
	Seed string
	// HistorySync: the host's history writes can fail (a file), and it answers history.sync:
	// notices wait for their ends to be written (storage_fault.go). A host that keeps no file
	// has nothing to confirm, and a sync would cost it a step per notice.
	HistorySync bool
	// Project is the project's directory and Worktrees its worktrees' folder (Storage), for
	// isolated tasks; NoGit: the host found no git repository there (isolation is refused).
	Project, Worktrees string
	NoGit              bool
}

// NewMachineWith returns an empty machine with cfg and what init gave besides it.
func NewMachineWith(cfg config.Config, s Setup) *Machine {
	m := NewMachine(cfg)
	m.configError, m.idSeed = s.ConfigError, s.Seed
	m.store.sync = s.HistorySync
	m.wt.project, m.wt.folder, m.wt.noGit = s.Project, s.Worktrees, s.NoGit
	m.cfg.API.ConfigError = s.ConfigError
	return m
}

// Config returns the configuration in force, defaults filled in.
func (m *Machine) Config() config.Config { return m.cfg }

// Step feeds one event at time now (Unix milliseconds) and returns the effects to carry out.
func (m *Machine) Step(now int64, ev Event) []Effect {
	m.changes++
	if now > m.now {
		m.now = now
	}
	m.out = nil
	switch ev.Type {
	case EventToolCall:
		m.onToolCall(ev)
	case EventToolAborted:
		m.onToolAborted(ev.CallID)
	case EventEffectDone:
		m.onEffectDone(ev)
	case EventOpenCode:
		if ev.Event != nil {
			m.onOpenCodeEvent(ev.Worker, *ev.Event)
		}
		for _, e := range ev.Events {
			m.onOpenCodeEvent(ev.Worker, e)
		}
	case EventWorkerState:
		m.onWorkerState(ev)
	case EventAPIStreams:
		m.onAPIStreams(ev.Open)
	case EventTimer:
		m.onTimer(ev.TimerID)
	case EventStart:
		if m.cfg.API.ReadOnly {
			m.probeWorkers() // it asks OpenCode nothing and follows no stream
		} else {
			m.fetchAgents()
			m.followWorkers()
		}
		m.out = append(m.out, Effect{Kind: EffectTimerSet, TimerID: HeartbeatTimer, DelayMs: httpapi.SSEHeartbeatIntervalMs})
	default:
		m.log("warn", fmt.Sprintf("unknown event type %q ignored", ev.Type))
	}
	m.readyYielded()
	if len(m.dirty) > 0 {
		m.noteWorkerUse()
		m.syncDeadlines()
		m.pruneHistory(true) // a change may have put the store past its limits
	}
	m.persistDirty()
	m.releaseTurns()
	out := m.out
	m.out = nil
	return out
}

// Task returns a copy of the task with id, if the machine has it.
func (m *Machine) Task(id string) (task.Task, bool) {
	t := m.task(id)
	if t == nil {
		t = m.foreign(id)
	}
	if t == nil {
		return task.Task{}, false
	}
	return t.public(), true
}

// Tasks returns copies of every task, in launch order: this machine's, then (merged in start
// order) the other processes' it follows.
func (m *Machine) Tasks() []task.Task {
	if len(m.others) > 0 {
		var out []task.Task
		for _, t := range m.apiTasks() {
			c := *t
			if c.Progress.LastTools == nil {
				c.Progress.LastTools = []string{}
			}
			out = append(out, c)
		}
		return out
	}
	out := make([]task.Task, 0, len(m.order))
	for _, id := range m.order {
		if t := m.task(id); t != nil {
			out = append(out, t.public())
		}
	}
	return out
}

// emit queues an effect and returns its ID.
func (m *Machine) emit(e Effect) int64 {
	m.nextEffect++
	e.ID = m.nextEffect
	e = m.stampDirectory(e)
	m.out = append(m.out, e)
	return e.ID
}

// request queues an effect whose result the machine needs, remembering what to do with it.
// It returns the effect's ID.
func (m *Machine) request(e Effect, p pending) int64 {
	e.Reply = true
	p.kind, p.at = e.Kind, m.now
	id := m.emit(e)
	m.pending[id] = p
	return id
}

func (m *Machine) log(level, msg string) {
	m.emit(Effect{Kind: EffectLog, Level: level, Message: msg})
}

func (m *Machine) replyTool(callID, output string, metadata map[string]any) {
	m.emit(Effect{Kind: EffectToolReply, CallID: callID, Output: output, Metadata: metadata})
}

func (m *Machine) failTool(callID, msg string) {
	m.emit(Effect{Kind: EffectToolReply, CallID: callID, Error: msg})
}

// armPoll makes sure the polling fallback runs while any task is at work.
func (m *Machine) armPoll() {
	if m.pollArmed || len(m.running()) == 0 {
		return
	}
	m.pollArmed = true
	m.emit(Effect{Kind: EffectTimerSet, TimerID: pollTimer, DelayMs: m.cfg.PollIntervalMs})
}

func sortStrings(s []string) { sort.Strings(s) }

func sortInt64s(s []int64) { sort.Slice(s, func(i, j int) bool { return s[i] < s[j] }) }
