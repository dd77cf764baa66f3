package core

// The rules both hosts carry out and the core does not see: how a status API server buffers and
// stops, the texts of the answers a host writes itself, how it builds the API's token and which
// of its environment variables it reads. They are written here once; the Go host uses them as
// they are and internal/cmd/generate emits them as TypeScript constants for the plugin
// (bridge/abi_types.gen.ts).

const (
	// StreamBufferFrames is how many Server-Sent Events frames a subscriber of /v1/events may
	// lag behind before it is dropped: a slow reader never holds up the others or the core.
	StreamBufferFrames = 64
	// MaxTaskFramesPerCall bounds the task frames one call to the core broadcasts: more become
	// one resync frame (coalesceFrames), so a burst never fills a subscriber's buffer and drops it.
	MaxTaskFramesPerCall = StreamBufferFrames / 2
	// StopGraceMs is how long a status API server that is told to stop (SIGINT, SIGTERM) lets
	// the answers in flight finish before it answers those still waiting itself.
	StopGraceMs = 2000
	// APITokenBytes is how many random bytes make the status API's bearer token (sent as hex).
	// A host draws a fresh token per process and writes it only to server.json (mode 0600).
	APITokenBytes = 32
	// FollowIntervalMs is how often a host looks at the logs other processes write to the
	// project's history (the histories op names them, the follow op reads what they gained;
	// core/history_files.go).
	FollowIntervalMs = 1000
	// FollowWatchedIntervalMs is how often a host that watches the history's folder for changes
	// (inotify, FSEvents) looks anyway: a change another process makes starts a look at once (at
	// most one per FollowIntervalMs), so the timed look is only the net under a watch that missed
	// one: an idle plugin then spends nothing on logs that do not change (BENCHMARKS.md).
	FollowWatchedIntervalMs = 30_000
	// APIIdleTimeoutMs is how long a status API server keeps a connection that sends nothing: one
	// that never sends its request, or a kept-alive one between requests. Event streams are not
	// idle: they get a heartbeat frame every httpapi.SSEHeartbeatIntervalMs and no time limit.
	// Unbounded, enough idle sockets would use up OpenCode's file descriptors.
	APIIdleTimeoutMs = 30_000
	// APIMaxConnections caps the connections a status API server holds open at once. Where the
	// host sees idle connections (the Go host), a new one past the cap closes the connection
	// idle longest instead of waiting, so idle sockets never keep /v1/health waiting; where it
	// sees only requests (Bun), a request past the cap is answered 503 at once.
	APIMaxConnections = 256
)

// Texts of the error answers a status API host writes itself, each as {"error": text}: they are
// the answers the core cannot give (it failed, or the host is stopping, or a task's logs, which
// only OpenCode has, could not be had).
const (
	// APIErrStarting: the plugin's core is still loading (503).
	APIErrStarting = "asyncagents is starting"
	// APIErrCoreUnavailable: the plugin's core failed to load (503); the host adds why.
	APIErrCoreUnavailable = "asyncagents is unavailable: its core failed to load"
	// APIErrCoreFailed: the http op failed (500).
	APIErrCoreFailed = "the core could not answer"
	// APIErrShuttingDown: a request on a connection kept alive from before a stop (503).
	APIErrShuttingDown = "the status API is shutting down"
	// APIErrBusy: a request past APIMaxConnections (503).
	APIErrBusy = "the status API has too many connections open; try again"
	// APIErrLogsStopped: the server stopped while a task's logs were awaited from OpenCode (503).
	APIErrLogsStopped = "the status API stopped before OpenCode gave the task's messages"
	// APIErrLogsFailed: OpenCode did not give a task's messages (502); a host may add why.
	APIErrLogsFailed = "could not read the task's messages"
	// APIErrLogsNoOpenCode: the host serves stored history with no OpenCode to ask (503).
	APIErrLogsNoOpenCode = "logs are read from OpenCode, which is not running; only stored task data is available here"
)

// Environment variables the hosts read. Their values go to the core as they are (the storage op,
// config.APIConfig.Auth), which decides what they mean.
const (
	// EnvAPIPort is the status API's first port (DefaultAPIPort when unset).
	EnvAPIPort = "ASYNCAGENTS_API_PORT"
	// EnvAPIAuth set to config.APIAuthNone turns the status API's token check off.
	EnvAPIAuth = "ASYNCAGENTS_API_AUTH"
)

// TmuxPaneEnv lists the variables of OpenCode's environment a tmux pane's `opencode attach`
// gets: the pane starts in tmux's environment, not OpenCode's, and needs the server's basic
// auth to attach.
var TmuxPaneEnv = []string{"OPENCODE_SERVER_PASSWORD", "OPENCODE_SERVER_USERNAME"}
