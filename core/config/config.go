package config

// Config holds every limit and switch of the core. Hosts pass it at init; zero fields take the
// defaults below, so an older host that knows fewer fields still gets sane values.
type Config struct {
	// MaxResultChars bounds the result carried inside a notice. A longer result is cut there,
	// with a pointer to asyncagents_output, which always returns it whole.
	MaxResultChars int `json:"maxResultChars,omitempty"`
	// PollIntervalMs is how often running tasks are checked against session.status, to catch a
	// session.idle event that never arrived.
	PollIntervalMs int64 `json:"pollIntervalMs,omitempty"`
	// DefaultBlockTimeoutMs and MaxBlockTimeoutMs bound asyncagents_output(block: true).
	DefaultBlockTimeoutMs int64 `json:"defaultBlockTimeoutMs,omitempty"`
	MaxBlockTimeoutMs     int64 `json:"maxBlockTimeoutMs,omitempty"`
	// Development adds "[hint attached]" to visible notices (NODE_ENV=development).
	Development bool `json:"development,omitempty"`
	// MaxConcurrentStarts is how many children run at once. Further tasks get their session at
	// once but wait, queued, until a running one ends.
	MaxConcurrentStarts int `json:"maxConcurrentStarts,omitempty"`
	// MaxDepth bounds nesting: a task's child may launch tasks of its own (when its agent may
	// delegate) only while the chain from the user's session is shorter than this.
	MaxDepth int `json:"maxDepth,omitempty"`
	// Notify chooses when notices wake the parent, and how their visible line is written.
	Notify NotifyConfig `json:"notify,omitempty"`
	// Toasts chooses which task endings OpenCode's TUI shows as a toast: "all" (the default),
	// "errors" (failures and warnings only) or "off".
	Toasts string `json:"toasts,omitempty"`
	// API configures the status API (token, auth, limits), for the http op.
	API APIConfig `json:"api,omitempty"`

	// Workers are the other machines tasks may run on, by name (workers.go).
	Workers map[string]WorkerConfig `json:"workers,omitempty"`
	// Agents gives each agent its model chain (asyncagents.json, see file.go).
	Agents map[string]AgentModels `json:"agents,omitempty"`
	// Fallback tunes the model fallback loop and its circuit breaker.
	Fallback FallbackConfig `json:"fallback,omitempty"`
	// Stall warns of a running task that has stopped making progress.
	Stall StallConfig `json:"stall,omitempty"`
	// TaskTimeoutMs is the wall-clock limit of a task that asyncagents_task gave no timeout:
	// at it the child is aborted and the task fails with its partial work. 0: no limit, since
	// long work is normal.
	TaskTimeoutMs int64 `json:"taskTimeoutMs,omitempty"`
	// History bounds the task history kept (retention.go in the core).
	History HistoryConfig `json:"history,omitempty"`
	// Tmux opens a pane per running child when OpenCode runs inside tmux.
	Tmux TmuxConfig `json:"tmux,omitempty"`
	// CancelOnParentAbort cancels a parent's running and queued tasks when its turn is
	// interrupted (default on, as OpenCode's own background subagents). A pointer, so that an
	// absent value and false differ.
	CancelOnParentAbort *bool `json:"cancelOnParentAbort,omitempty"`
	// Concurrency limits children per model and per provider (controls.go).
	Concurrency ConcurrencyConfig `json:"concurrency,omitempty"`
	// Budget is every task's default budget, and the budget of one session's tasks together.
	Budget BudgetConfig `json:"budget,omitempty"`
	// Permission handles a child's permission requests.
	Permission PermissionConfig `json:"permission,omitempty"`
	// Isolation is where a task's child works when asyncagents_task and the agent's config say
	// nothing: IsolationNone (the parent's directory, the default) or IsolationWorktree (a git
	// worktree of its own, core/worktree).
	Isolation string `json:"isolation,omitempty"`
	// Headless is how a non-interactive run (`opencode run`) treats the tasks of its turn
	// (core/headless.go).
	Headless HeadlessConfig `json:"headless,omitempty"`
}

// HeadlessConfig is what a non-interactive run does with the tasks its turn launched.
type HeadlessConfig struct {
	// WaitForTasks holds the end of a turn while tasks it launched run, so that their results
	// reach the parent in the same run (default on). A pointer, so that an absent value and
	// false differ.
	WaitForTasks *bool `json:"waitForTasks,omitempty"`
	// Active is set by the host when OpenCode runs non-interactively (`opencode run`); the
	// interactive TUI and `opencode serve` leave it off, and nothing changes there.
	Active bool `json:"active,omitempty"`
}

// Waits reports whether a turn's end is held for its tasks: a headless run, with
// waitForTasks on (unset means on).
func (h HeadlessConfig) Waits() bool {
	return h.Active && (h.WaitForTasks == nil || *h.WaitForTasks)
}

// APIConfig is the HTTP API's configuration.
type APIConfig struct {
	// Token is the bearer token required on everything but /v1/health and OPTIONS.
	Token string `json:"token,omitempty"`
	// Auth is "token" (the default; any value but "none" means it) or "none"
	// (ASYNCAGENTS_API_AUTH=none), which turns the token check off.
	Auth string `json:"auth,omitempty"`
	// MaxSubscribers is how many SSE streams may be open at once (default
	// httpapi.APIDefaultMaxSubscribers, room for the subscribers the benchmark feeds); past it
	// /v1/events answers 503.
	MaxSubscribers int `json:"maxSubscribers,omitempty"`
	// StartedAt is when the server started (Unix ms), for the uptime.
	StartedAt int64 `json:"startedAt,omitempty"`
	// Version is reported by /v1/health; empty means the core's Version.
	Version string `json:"version,omitempty"`
	// ReadOnly marks a server that only reads the stored history (asyncagents serve): it cannot
	// cancel a task, which the plugin's OpenCode runs.
	ReadOnly bool `json:"readOnly,omitempty"`
	// Degraded is why the server cannot do all it should (the task history cannot be written):
	// /v1/health then reads "degraded" with it. Set by the machine, never configured.
	Degraded string `json:"-"`
	// ConfigError is the invalid config (a file, or the plugin's options) that fails every
	// launch: /v1/health reports it. Set by the machine, never by the user.
	ConfigError string `json:"-"`
	// Workers is the body of GET /v1/workers (the workers, their state and load), written by the
	// machine for that request only, never configured.
	Workers string `json:"-"`
}

// AgentModels is one agent's models: Models is the fallback chain, tried in order; Model is a
// chain of one. Each is "provider/model" as OpenCode names models.
type AgentModels struct {
	Model  string   `json:"model,omitempty"`
	Models []string `json:"models,omitempty"`
	// Isolation is the agent's tasks' isolation over the global one ("" for the global's).
	Isolation string `json:"isolation,omitempty"`
	// Worker is where the agent's tasks run when asyncagents_task names none: a worker's name,
	// "auto" or "local" ("" for local).
	Worker string `json:"worker,omitempty"`
}

// Isolation settings: where a task's child works.
const (
	IsolationNone     = "none"
	IsolationWorktree = "worktree"
)

// Isolations are the values isolation takes, in the order errors name them.
var Isolations = []string{IsolationNone, IsolationWorktree}

// FallbackConfig tunes the fallback loop (fallback.go).
type FallbackConfig struct {
	// Enabled turns the fallback loop on (the default): false runs each task on the first model
	// of its chain only. A pointer, so that an absent value and false differ.
	Enabled *bool `json:"enabled,omitempty"`
	// AttemptTimeoutMs abandons an attempt that has shown no activity (no new message part, and
	// no tool at work) for this long, and moves to the next model.
	AttemptTimeoutMs int64 `json:"attemptTimeoutMs,omitempty"`
	// FailureThreshold is how many consecutive failures open a model's circuit.
	FailureThreshold int `json:"failureThreshold,omitempty"`
	// CooldownMs is how long an open circuit skips its model; 0 means no cooldown (a model is
	// never skipped). A pointer, so that an absent value (the default) and 0 differ.
	CooldownMs *int64 `json:"cooldownMs,omitempty"`
}

// HistoryConfig bounds the finished tasks kept, in memory and in the history file alike.
type HistoryConfig struct {
	// MaxTasks is how many tasks are kept: past it, the oldest finished ones are dropped.
	MaxTasks int `json:"maxTasks,omitempty"`
	// MaxAgeDays drops finished tasks started more than this many days ago.
	MaxAgeDays int `json:"maxAgeDays,omitempty"`
}

// StallConfig tunes the stall warning (core/liveness.go).
type StallConfig struct {
	// WarnAfterMs marks a running task stalled after this long with no activity (no new message
	// part, and no tool at work), and tells its parent once. 0 turns the warning off; unset
	// takes the default (a pointer, so that 0 can mean off).
	WarnAfterMs *int64 `json:"warnAfterMs,omitempty"`
}

// WarnAfter is WarnAfterMs with its default, 0 when the warning is off.
func (s StallConfig) WarnAfter() int64 {
	if s.WarnAfterMs == nil || *s.WarnAfterMs < 0 {
		return defaultStallWarnAfterMs
	}
	return *s.WarnAfterMs
}

// TmuxConfig opens a pane running `opencode attach <url> --session <id>` for each running child.
type TmuxConfig struct {
	// Enabled turns panes on (default off).
	Enabled bool `json:"enabled,omitempty"`
	// Inside is set by the host when OpenCode runs inside tmux ($TMUX); panes open only then.
	Inside bool `json:"inside,omitempty"`
}

// NotifyConfig is the notices' wake policy and format.
type NotifyConfig struct {
	// Wake is "batch" (the default: a notice wakes the parent when its batch is done or a task
	// failed; other notices are stored without a model turn) or "each" (every notice wakes it,
	// but a cancel's to a session that waits for its own tasks: it has nothing to answer).
	Wake string `json:"wake,omitempty"`
	// Format is how the notice's visible line is written: "plain" (the default: OpenCode's TUI
	// shows a user message as plain text) or "markdown" (seed 000's words exactly, for a client
	// that renders Markdown).
	Format string `json:"format,omitempty"`
}

// Wake policies.
const (
	WakeBatch = "batch"
	WakeEach  = "each"
)

// Notice formats.
const (
	FormatPlain    = "plain"
	FormatMarkdown = "markdown"
)

// Toast settings.
const (
	ToastsAll    = "all"
	ToastsErrors = "errors"
	ToastsOff    = "off"
)

// Defaults.
const (
	defaultMaxResultChars      = 12000
	defaultPollIntervalMs      = 3000
	defaultBlockTimeoutMs      = 120_000
	defaultMaxBlockTimeoutMs   = 600_000
	defaultMaxConcurrentStarts = 10
	defaultMaxDepth            = 2
	minPollIntervalMs          = 100
	defaultAttemptTimeoutMs    = 180_000
	defaultFailureThreshold    = 3
	defaultCooldownMs          = 3_600_000
	defaultStallWarnAfterMs    = 120_000
	defaultHistoryMaxTasks     = 10_000
	defaultHistoryMaxAgeDays   = 30
)

// WithDefaults fills the zero fields with the defaults and brings the others within their bounds.
func (c Config) WithDefaults() Config {
	if c.MaxResultChars <= 0 {
		c.MaxResultChars = defaultMaxResultChars
	}
	if c.PollIntervalMs <= 0 {
		c.PollIntervalMs = defaultPollIntervalMs
	}
	if c.PollIntervalMs < minPollIntervalMs {
		c.PollIntervalMs = minPollIntervalMs
	}
	if c.DefaultBlockTimeoutMs <= 0 {
		c.DefaultBlockTimeoutMs = defaultBlockTimeoutMs
	}
	if c.MaxBlockTimeoutMs <= 0 {
		c.MaxBlockTimeoutMs = defaultMaxBlockTimeoutMs
	}
	if c.MaxConcurrentStarts <= 0 {
		c.MaxConcurrentStarts = defaultMaxConcurrentStarts
	}
	if c.MaxDepth <= 0 {
		c.MaxDepth = defaultMaxDepth
	}
	if c.Notify.Wake != WakeEach {
		c.Notify.Wake = WakeBatch
	}
	if c.Notify.Format != FormatMarkdown {
		c.Notify.Format = FormatPlain
	}
	if c.Isolation != IsolationWorktree {
		c.Isolation = IsolationNone
	}
	if c.Toasts != ToastsErrors && c.Toasts != ToastsOff {
		c.Toasts = ToastsAll
	}
	if c.Fallback.AttemptTimeoutMs <= 0 {
		c.Fallback.AttemptTimeoutMs = defaultAttemptTimeoutMs
	}
	if c.Fallback.FailureThreshold <= 0 {
		c.Fallback.FailureThreshold = defaultFailureThreshold
	}
	if c.Fallback.Enabled == nil {
		c.Fallback.Enabled = Bool(true)
	}
	switch {
	case c.Fallback.CooldownMs == nil:
		c.Fallback.CooldownMs = Int64(defaultCooldownMs)
	case *c.Fallback.CooldownMs < 0:
		c.Fallback.CooldownMs = Int64(0)
	}
	if c.History.MaxTasks <= 0 {
		c.History.MaxTasks = defaultHistoryMaxTasks
	}
	if c.History.MaxAgeDays <= 0 {
		c.History.MaxAgeDays = defaultHistoryMaxAgeDays
	}
	if c.Stall.WarnAfterMs == nil || *c.Stall.WarnAfterMs < 0 {
		v := int64(defaultStallWarnAfterMs)
		c.Stall.WarnAfterMs = &v
	}
	if c.Headless.WaitForTasks == nil {
		c.Headless.WaitForTasks = Bool(true)
	}
	if c.CancelOnParentAbort == nil {
		c.CancelOnParentAbort = Bool(true)
	}
	if len(c.Workers) > 0 {
		ws := make(map[string]WorkerConfig, len(c.Workers))
		for n, w := range c.Workers {
			ws[n] = w.withDefaults()
		}
		c.Workers = ws
	}
	if c.TaskTimeoutMs < 0 {
		c.TaskTimeoutMs = 0
	}
	if c.DefaultBlockTimeoutMs > c.MaxBlockTimeoutMs {
		c.DefaultBlockTimeoutMs = c.MaxBlockTimeoutMs
	}
	return c
}

// FallbackOn reports whether the fallback loop is on (unset means on).
func (f FallbackConfig) FallbackOn() bool { return f.Enabled == nil || *f.Enabled }

// Cooldown is CooldownMs in force: the default when unset, 0 for none.
func (f FallbackConfig) Cooldown() int64 {
	if f.CooldownMs == nil {
		return defaultCooldownMs
	}
	return max(*f.CooldownMs, 0)
}

// Bool and Int64 return pointers to their values, for the optional fields.
func Bool(v bool) *bool    { return &v }
func Int64(v int64) *int64 { return &v }
