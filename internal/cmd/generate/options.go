package main

import (
	"encoding/json"
	"strings"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/httpapi"
)

// option is one user option: where it sits, what values it takes and what it does. The JSON
// Schema of the config file and the README's option table are written from this list, with the
// defaults the core itself applies (core.NewMachine's config); core/config/schema_test.go
// checks the schema against the core's own checks of a config file.
type option struct {
	path string // dotted, "<name>" for any key of a map: agents.<name>.model
	kind string // "integer", "boolean", "enum", "model", "models"
	min  int64  // integer: the least value a config file may give
	enum []string
	// doc says what the option does, in Markdown; the schema gets it without the backquotes.
	doc string
	// noFile: set only in the plugin options of opencode.json, never in a config file.
	noFile bool
	// none is the default's text when the option has no value by default.
	none string
	// keys, for an option whose path ends in a map's <name>: "model" or "provider", the pattern
	// of the map's keys.
	keys string
	// pattern: a "string" option's regular expression (config's own); def: the default of an
	// option inside a map's entry (the core fills it per entry, so it is not in NewMachine's).
	pattern string
	def     any
}

var options = []option{
	{path: "maxResultChars", kind: "integer", min: 1, doc: "A longer result is cut in the notice, with a pointer to `asyncagents_output` (which returns it whole)."},
	{path: "pollIntervalMs", kind: "integer", min: 1, doc: "How often, in milliseconds, running tasks are checked in case OpenCode's `session.idle` event was lost (100 at least)."},
	{path: "defaultBlockTimeoutMs", kind: "integer", min: 1, doc: "How long `asyncagents_output(block: true)` waits without a `timeout` argument, in milliseconds."},
	{path: "maxBlockTimeoutMs", kind: "integer", min: 1, doc: "The largest `timeout` `asyncagents_output` accepts, in milliseconds."},
	{path: "maxConcurrentStarts", kind: "integer", min: 1, doc: "How many children run at once; further tasks wait, queued."},
	{path: "maxDepth", kind: "integer", min: 1, doc: "How deep tasks may nest (a task's child launching tasks, itself or through a subagent it runs), for agents allowed to delegate. OpenCode's own `subagent_depth` (1 by default) counts a local task's child as one subagent level, so such a child may run OpenCode's `task` tool only when it is raised."},
	{path: "notify.wake", kind: "enum", enum: []string{config.WakeBatch, config.WakeEach}, doc: "`\"batch\"`: the parent is woken once its batch of tasks is done or a task failed; `\"each\"`: every notice wakes it (a cancel wakes no subagent or headless run waiting for its own tasks)."},
	{path: "notify.format", kind: "enum", enum: []string{config.FormatPlain, config.FormatMarkdown}, doc: "`\"plain\"`: the notice's visible line has no Markdown (OpenCode's TUI shows text); `\"markdown\"`: in bold."},
	{path: "isolation", kind: "enum", enum: config.Isolations, doc: "Where a task's child works when `asyncagents_task` gives no `isolation`: `\"none\"`, in the parent's directory; `\"worktree\"`, in a git worktree of its own on the branch `asyncagents/<task_id>`, built from the parent's working tree at launch; its changes come back with `asyncagents_merge`."},
	{path: "toasts", kind: "enum", enum: []string{config.ToastsAll, config.ToastsErrors, config.ToastsOff}, doc: "Which task endings OpenCode's TUI shows as a toast: `\"all\"` (a task finished, failed or cancelled; one toast for a whole batch), `\"errors\"` (failures and warnings only) or `\"off\"`."},
	{path: "agents.<name>.models", kind: "models", none: "none", doc: "The fallback chain for tasks of agent `<name>`, `\"provider/model\"` each, tried in order: when an attempt fails with a provider error (rate limit, overload, unavailable model, quota, auth, network), the next model gets the same prompt in the same child session. Wins over `model`."},
	{path: "agents.<name>.isolation", kind: "enum", enum: config.Isolations, none: "the global `isolation`", doc: "Where tasks of agent `<name>` work, over the global `isolation`."},
	{path: "agents.<name>.model", kind: "model", none: "none", doc: "A chain of one model, `\"provider/model\"` as OpenCode names models (for example `\"anthropic/claude-sonnet-4\"`)."},
	{path: "agents.<name>.worker", kind: "string", pattern: config.WorkerChoicePattern, none: "`\"local\"`", doc: "Where tasks of agent `<name>` run when `asyncagents_task` names no `worker`: a worker's name, `\"auto\"` (the place with the most free slots) or `\"local\"`."},
	{path: "workers.<name>.url", kind: "string", pattern: config.WorkerURLPattern, none: "required", doc: "Worker `<name>`'s OpenCode server (`opencode serve`), absolute, with no user or password in it. `http://` only on loopback unless `insecure`."},
	{path: "workers.<name>.username", kind: "string", pattern: config.WorkerUsernamePattern, def: config.DefaultWorkerUsername, doc: "The worker's basic auth user."},
	{path: "workers.<name>.passwordEnv", kind: "string", pattern: config.EnvNamePattern, none: "required", doc: "The name of the environment variable holding the worker's password (its `OPENCODE_SERVER_PASSWORD`). The password itself is never written in a config file."},
	{path: "workers.<name>.directory", kind: "string", pattern: config.AbsPathPattern, none: "required", doc: "The repository's path on the worker, where its tasks work."},
	{path: "workers.<name>.maxTasks", kind: "integer", min: 1, def: config.DefaultWorkerMaxTasks, doc: "How many tasks run on the worker at once; further tasks placed there wait, queued. They take no local slot (`maxConcurrentStarts`)."},
	{path: "workers.<name>.lostAfterMs", kind: "integer", min: 1000, def: config.DefaultWorkerLostAfterMs, doc: "How long the worker's event stream may stay down before its running tasks fail as lost (keeping their partial work)."},
	{path: "workers.<name>.restAfterMs", kind: "integer", min: 1000, def: config.DefaultWorkerRestAfterMs, doc: "How long the worker may hold none of this parent's tasks before the parent stops following its event stream (which carries every session's events, other parents' children's too) and only asks its health; a task placed there follows it again."},
	{path: "workers.<name>.insecure", kind: "boolean", def: false, doc: "Allow `http://` to a worker that is not on loopback: the password and all the work then cross the network in clear."},
	{path: "workers.<name>.rerunLost", kind: "boolean", def: false, doc: "A task lost with its worker starts again (a new attempt, placed again) instead of failing."},
	{path: "workers.<name>.pollMs", kind: "integer", min: config.MinWorkerPollMs, none: "not polled: the event stream is followed", doc: "Poll the worker every this many milliseconds instead of following its event stream: the parent then reads only its own tasks' state there, not every session's stream, but ends and questions reach it a poll late (the ends one poll finds in one message), and a running task's progress, partial work and spending (its own subagents' too, found by its task tool's parts) are read every 5 s (or this, if longer)."},
	{path: "fallback.enabled", kind: "boolean", doc: "The fallback loop: `false` runs each task on the first model of its chain only, and a provider error fails it."},
	{path: "fallback.attemptTimeoutMs", kind: "integer", min: 1000, doc: "An attempt with no activity (no new message part, and no tool at work) for this many milliseconds is abandoned for the next model."},
	{path: "fallback.failureThreshold", kind: "integer", min: 1, doc: "Consecutive provider failures that open a model's circuit: the model is then skipped for `cooldownMs`."},
	{path: "fallback.cooldownMs", kind: "integer", min: 0, doc: "How long, in milliseconds, an open circuit skips its model. 0 means no cooldown: a model is never skipped."},
	{path: "history.maxTasks", kind: "integer", min: 1, doc: "How many tasks the history keeps: past it, the oldest finished tasks are dropped (at start and as tasks finish). Running tasks are always kept."},
	{path: "history.maxAgeDays", kind: "integer", min: 1, doc: "Finished tasks started more than this many days ago are dropped from the history."},
	{path: "stall.warnAfterMs", kind: "integer", min: 0, doc: "A running task with no activity (no new message part, and no tool at work) for this many milliseconds is marked stalled, and its parent gets one short notice without a model turn. 0 turns the warning off."},
	{path: "taskTimeoutMs", kind: "integer", min: 0, doc: "The wall-clock limit of a task whose `asyncagents_task` call gave no `timeout`, in milliseconds: at it the child is aborted and the task fails, carrying its partial work. 0: no limit."},
	{path: "cancelOnParentAbort", kind: "boolean", doc: "When the parent's turn is interrupted (Esc in the TUI, or `POST /session/:id/abort`), its running and queued tasks are cancelled, and theirs below them, each keeping its partial work; the parent gets one `⊘` line. A turn that simply ends cancels nothing."},
	{path: "concurrency.default", kind: "integer", min: 0, doc: "How many children may run at once on each model that no entry below names. 0: no limit but `maxConcurrentStarts`."},
	{path: "concurrency.providers.<name>", kind: "integer", min: 0, keys: "provider", none: "none", doc: "How many children may run at once on provider `<name>`'s models together (those without an entry of their own in `models`). 0: no limit."},
	{path: "concurrency.models.<name>", kind: "integer", min: 0, keys: "model", none: "none", doc: "How many children may run at once on `\"provider/model\"` `<name>`; wins over its provider's entry. Tasks past a limit wait, first in first out, with no session."},
	{path: "budget.steps", kind: "integer", min: 0, doc: "Every task's default step budget: past this many model calls its child is aborted and the task fails with `budget exceeded`, keeping its partial work. `asyncagents_task`'s `budget` overrides it. 0: no limit."},
	{path: "budget.tokens", kind: "integer", min: 0, doc: "Every task's default token budget (input, output, reasoning and cache tokens over all its model calls). 0: no limit."},
	{path: "budget.costUsd", kind: "number", doc: "Every task's default cost budget in US dollars, as OpenCode prices the model. 0: no limit."},
	{path: "budget.sessionCostUsd", kind: "number", doc: "The cost budget of all the tasks under one session, nested ones included: past it, its running tasks stop and new launches are refused with the figures. 0: no limit."},
	{path: "permission.timeoutMs", kind: "integer", min: 0, doc: "A child's permission request that nobody answered for this many milliseconds is rejected, with a message telling the child to go on without it. 0: wait for the user."},
	{path: "headless.waitForTasks", kind: "boolean", doc: "In a non-interactive run (`opencode run`), the parent's turn does not end while tasks it launched still run: their results reach it, it answers with them, and only then does the run exit. `false`: the run ends with the turn, and its tasks with it."},
	{path: "api.maxSubscribers", kind: "integer", min: 1, noFile: true, doc: "How many status API event streams may be open at once; past it `/v1/events` answers 503."},
	{path: "tmux.enabled", kind: "boolean", doc: "Inside tmux, with OpenCode's server listening (`opencode --port 4096`), give each running child a pane running `opencode attach <server> --session <session_id>`, closed when its task ends; a child on a worker attaches to that worker, with its password."},
}

// groups describe the objects the options sit in, for the schema.
var groups = map[string]string{
	"agents":                "Model chains per agent name (a subagent such as general, explore, or one of yours). A task of an agent without an entry runs on the model of the parent's message. A project's entry for an agent replaces the global entry for that agent as a whole.",
	"agents.<name>":         "One agent's models, isolation and worker. models wins over model when both are set.",
	"fallback":              "The model fallback loop and its circuit breaker.",
	"workers":               "Other machines that run tasks: each a plain `opencode serve` reached through its API, by name (lower case letters, digits, - and _; not auto or local). A project's entry for a worker replaces the global entry as a whole.",
	"workers.<name>":        "One worker: its URL, basic auth and repository directory.",
	"tmux":                  "tmux panes for running children.",
	"stall":                 "The warning for a running task that has stopped making progress.",
	"history":               "How much of the task history is kept.",
	"notify":                "When task notices wake the parent session, and how they are written.",
	"concurrency":           "Limits per model and per provider, each a first-in-first-out queue; `maxConcurrentStarts` stays the overall cap.",
	"concurrency.providers": "Limits per provider, by the provider's name as OpenCode names it (the part before the slash).",
	"concurrency.models":    "Limits per model, by \"provider/model\".",
	"permission":            "A child's permission requests, which reach the user through the parent, the TUI's toasts, the API and the dashboard.",
	"headless":              "Non-interactive runs (`opencode run`).",
	"budget":                "Budgets with an automatic stop: past a limit, the child is aborted and its task fails with the figures.",
}

// defaults are the core's defaults by option path: the configuration a machine runs on when
// given none, and the status API's subscriber limit, which the API applies itself.
func defaults() (map[string]any, error) {
	b, err := json.Marshal(core.NewMachine(config.Config{}).Config())
	if err != nil {
		return nil, err
	}
	var tree map[string]any
	if err := json.Unmarshal(b, &tree); err != nil {
		return nil, err
	}
	out := map[string]any{"api.maxSubscribers": float64(httpapi.APIDefaultMaxSubscribers)}
	for _, o := range options {
		if _, set := out[o.path]; set || strings.Contains(o.path, "<") {
			continue
		}
		var at any = tree
		for _, k := range strings.Split(o.path, ".") {
			m, _ := at.(map[string]any)
			at = m[k]
		}
		if at != nil {
			out[o.path] = at
		} else if o.kind == "boolean" {
			out[o.path] = false // omitted from the JSON when false
		} else if o.kind == "integer" || o.kind == "number" {
			out[o.path] = float64(0) // omitted from the JSON when 0 (taskTimeoutMs: no limit)
		}
	}
	return out, nil
}

// plain is Markdown without its code quotes, for the schema's descriptions.
func plain(md string) string { return strings.ReplaceAll(md, "`", "") }
