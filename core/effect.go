package core

import (
	"strings"

	"github.com/asyncagents/asyncagents/core/httpapi"
)

// Effect kinds the hosts carry out.
const (
	EffectAgentsList    = "agents.list"    // list OpenCode's agents; replies []AgentInfo
	EffectSessionCreate = "session.create" // create a session; replies {"id": "..."}
	EffectPromptAsync   = "session.promptAsync"
	EffectMessages      = "session.messages" // replies OpenCode's [{info, parts}]
	EffectStatus        = "session.status"   // replies {sessionID: {type}} for non-idle sessions
	EffectAbort         = "session.abort"
	EffectSessionGet    = "session.get" // replies the session, or fails when it is gone
	// session.children lists SessionID's child sessions; session.list the sessions whose title
	// holds Title (OpenCode's search), for a task on a worker, which holds no parent session.
	// Both reply [{id, parentID, metadata}]. A task restored with no session looks there for the
	// child that names it (history_reconcile_children.go).
	EffectSessionChildren = "session.children"
	EffectSessionList     = "session.list"
	// session.delete removes a child session created for a task that was cancelled while its
	// creation was in flight.
	EffectSessionDelete = "session.delete"
	EffectToolReply     = "tool.reply" // answer a pending tool call
	EffectTimerSet      = "timer.set"
	EffectTimerClear    = "timer.clear"
	EffectLog           = "log"
	// session.summarize compacts a child's conversation after a context-length error; replies
	// when OpenCode has finished (POST /session/{id}/summarize with the attempt's model).
	EffectSummarize = "session.summarize"
	// tmux.open opens a pane attached to SessionID (a remote task's: on its Worker, through
	// Remote); tmux.close closes it. Neither replies: a pane that fails to
	// open never fails the task. Both are carried out on this machine, worker or not.
	EffectTmuxOpen  = "tmux.open"
	EffectTmuxClose = "tmux.close"
	// state.write replaces the plugin's model-health state file with Content (write a temporary
	// file, rename it over); no reply.
	EffectStateWrite = "state.write"
	// tui.toast shows a short toast in OpenCode's TUI: Title, Message and Variant ("info",
	// "success", "warning" or "error"). No reply: a toast that fails is ignored. A host
	// without a TUI ignores it.
	EffectToast = "tui.toast"
	// The worktree effects of an isolated task (core/worktree, docs/rationale/worktrees.md); all
	// reply. create snapshots the parent's tree (Directory) onto Branch at Path, replies
	// {path, base, head}; commit turns Path's changes since Base into one commit with Message,
	// replies {commit, files, diff, diffCut} (diff cut to MaxBytes); remove removes Path and
	// Branch (empty keeps it); inspect replies {dirty} for Directory; merge applies Commit over
	// Base to Directory's tree, replies {conflicts} or {applied}; list replies {worktrees} of
	// Directory and of the folder Path.
	EffectWorktreeCreate  = "worktree.create"
	EffectWorktreeCommit  = "worktree.commit"
	EffectWorktreeRemove  = "worktree.remove"
	EffectWorktreeInspect = "worktree.inspect"
	EffectWorktreeMerge   = "worktree.merge"
	EffectWorktreeList    = "worktree.list"
	// worktree.import turns a patch (Content) into a commit over Directory's HEAD on Branch,
	// with Message, through a temporary index (the user's index, tree and branches untouched);
	// replies {base, commit, files, diff, diffCut} (diff cut to MaxBytes), {commit: ""} for an
	// empty patch, and fails with git's words when the patch does not apply. It brings a remote
	// isolated task's changes home (docs/rationale/workers.md).
	EffectWorktreeImport = "worktree.import"
)

// The worker effects (docs/rationale/workers.md): each carries Worker and Remote, how to reach
// that worker's `opencode serve`. Session effects of a task on a worker carry them too, and the
// host sends them to Remote.URL instead of the local OpenCode.
const (
	// worker.follow keeps one /global/event stream of the worker open (a second follow of the
	// same worker is a no-op), reconnecting with backoff, and feeds its payloads back as opencode
	// events with Worker set, and its state as worker.state events. No reply.
	EffectWorkerFollow = "worker.follow"
	// worker.unfollow closes the worker's stream that worker.follow opened and forgets it: no
	// more of its events or states are fed, and a later worker.follow opens a new one. The core
	// sends it when the worker rests (workers_rest.go). No reply.
	EffectWorkerUnfollow = "worker.unfollow"
	// worker.health asks GET /global/health; replies {healthy, version}, or fails with a plain
	// reason ("wrong username or password (401)", "connection refused", "timed out after 5 s").
	EffectWorkerHealth = "worker.health"
	// worker.worktree.create makes a worktree of the worker's clone (Directory) named TaskID;
	// replies {directory, branch}. diff replies {patch}: the uncommitted changes of Directory
	// (the worktree on the worker), untracked files included. remove deletes the worktree Path of
	// the clone Directory and its branch; replies null. list replies {directories}: the
	// worktrees OpenCode made of the clone Directory (its GET /experimental/worktree).
	EffectWorkerWorktreeCreate = "worker.worktree.create"
	EffectWorkerWorktreeDiff   = "worker.worktree.diff"
	EffectWorkerWorktreeRemove = "worker.worktree.remove"
	EffectWorkerWorktreeList   = "worker.worktree.list"
)

// Remote is how a host reaches a worker (httpapi.Remote, which the status API's answers carry
// too).
type Remote = httpapi.Remote

// Effect is one thing the core asks a host to do. When Reply is set, the host must feed back an
// effect.done event with the same ID, whether the effect worked or not.
type Effect struct {
	ID    int64  `json:"id"`
	Kind  string `json:"kind"`
	Reply bool   `json:"reply,omitempty"`

	SessionID string `json:"sessionID,omitempty"`
	// Directory is the directory an effect works in: on a session effect of an isolated task its
	// worktree (the host sends OpenCode ?directory=), on a worktree effect the project. Empty:
	// the plugin's own directory.
	Directory string `json:"directory,omitempty"`
	// Worker names the worker an effect is carried out on ("" for the local OpenCode), and Remote
	// how to reach it: a session effect with them goes to Remote.URL with ?directory=Directory.
	Worker string  `json:"worker,omitempty"`
	Remote *Remote `json:"remote,omitempty"`
	// Follow: on worker.follow, how the host may group the stream's events (follow_batch.go).
	Follow *FollowRule `json:"follow,omitempty"`
	// TaskID names the task a session effect works for (session.create has no session yet);
	// hosts may log or profile by it.
	TaskID string `json:"taskID,omitempty"`
	// Limit, on session.messages, reads only the newest Limit messages (OpenCode's ?limit=); 0
	// reads them all.
	Limit int `json:"limit,omitempty"`
	// Notice marks a session.promptAsync that notifies a task's parent (a host may deliver it
	// by a shorter path, or count it).
	Notice bool `json:"notice,omitempty"`
	// TaskIDs lists every task a notice tells of, when it tells of more than one (notices ready
	// together for one parent go as one message); TaskID is then the first.
	TaskIDs    []string         `json:"taskIDs,omitempty"`
	ParentID   string           `json:"parentID,omitempty"`
	Title      string           `json:"title,omitempty"`
	Permission []PermissionRule `json:"permission,omitempty"`
	Agent      string           `json:"agent,omitempty"`
	Parts      []TextPart       `json:"parts,omitempty"`
	Tools      map[string]bool  `json:"tools,omitempty"`
	NoReply    bool             `json:"noReply,omitempty"`
	// Model is "provider/model" for session.promptAsync and session.summarize; empty lets
	// OpenCode choose. ProviderID and ModelID are its two halves, as OpenCode's API takes them
	// (the model ID may hold slashes itself): a host sends these, never splits Model.
	Model      string `json:"model,omitempty"`
	ProviderID string `json:"providerID,omitempty"`
	ModelID    string `json:"modelID,omitempty"`

	// tool.reply: Output is the tool's answer; Error, when set, fails the call with that text.
	// Metadata is the tool answer's metadata, and on session.create the new session's (OpenCode
	// keeps it, and lists it with the session: it names the task the child works for).
	CallID   string         `json:"callID,omitempty"`
	Output   string         `json:"output,omitempty"`
	Error    string         `json:"error,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`

	// timer.set and timer.clear
	TimerID string `json:"timerID,omitempty"`
	DelayMs int64  `json:"delayMs,omitempty"`

	// log; tui.toast (Message and Title, with Variant)
	Level   string `json:"level,omitempty"`
	Message string `json:"message,omitempty"`
	Variant string `json:"variant,omitempty"`

	// history.append and history.rewrite; state.write (Content into File, a name in the
	// plugin's storage directory)
	Line    string `json:"line,omitempty"`
	Content string `json:"content,omitempty"`
	File    string `json:"file,omitempty"`

	// permission.reply: the request and the answer (core/permission.go)
	RequestID string `json:"requestID,omitempty"`
	Answer    string `json:"answer,omitempty"`

	// worktree.*: the worktree's folder and branch, its snapshot commit (Base), the commit to
	// merge, and the cap on a commit's diff
	Path     string `json:"path,omitempty"`
	Branch   string `json:"branch,omitempty"`
	Base     string `json:"base,omitempty"`
	Commit   string `json:"commit,omitempty"`
	MaxBytes int    `json:"maxBytes,omitempty"`

	// sse.broadcast: a Server-Sent Events frame for every open stream of the status API
	Frame string `json:"frame,omitempty"`
}

// EffectSSEBroadcast sends Frame to every open /v1/events stream. Like the history effects it
// takes no ID and gets no reply.
const EffectSSEBroadcast = "sse.broadcast"

// HeartbeatTimer drives the status API's heartbeat frames. A host that starts no machine of its
// own (the CLI's serve) arms it with one timer.fired event; each beat re-arms it.
const HeartbeatTimer = "sse.heartbeat"

// TextPart is a text part of a prompt. Synthetic parts reach the model but are hidden in the TUI.
type TextPart struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	Synthetic bool   `json:"synthetic,omitempty"`
}

// PermissionRule is one rule of an OpenCode permission ruleset.
type PermissionRule struct {
	Permission string `json:"permission"`
	Pattern    string `json:"pattern"`
	Action     string `json:"action"`
}

// AgentInfo is the part of OpenCode's agent list the core needs.
type AgentInfo struct {
	Name        string           `json:"name"`
	Mode        string           `json:"mode"`
	Description string           `json:"description,omitempty"`
	Permission  []PermissionRule `json:"permission,omitempty"`
	// Model is the agent's own model in OpenCode's config, if it has one: a task of the agent
	// runs on it (as OpenCode's own task tool does) unless asyncagents.json gives a chain.
	Model *AgentModel `json:"model,omitempty"`
}

// AgentModel is a model as OpenCode's agent list names it.
type AgentModel struct {
	ProviderID string `json:"providerID"`
	ModelID    string `json:"modelID"`
}

// CanDelegate reports whether the agent was given delegation rights explicitly: its own rules
// allow "task" or asyncagents_task by name (a blanket "*" does not count). As in OpenCode's own
// task tool, a subagent without them gets the delegation tools removed.
func (a AgentInfo) CanDelegate() bool {
	allowed := false
	for _, r := range a.Permission { // the last matching rule wins, as in OpenCode
		if r.Permission == "task" || r.Permission == ToolTask {
			allowed = r.Action == "allow"
		}
	}
	return allowed
}

// withModel sets e's model, with its provider and model IDs: "provider/model", split at the
// first slash. A name with no provider sets none, and OpenCode chooses (the config refuses such
// names; the models read from OpenCode's events always have one).
func (e Effect) withModel(model string) Effect {
	provider, id, ok := strings.Cut(model, "/")
	if !ok || provider == "" || id == "" {
		return e
	}
	e.Model, e.ProviderID, e.ModelID = model, provider, id
	return e
}
