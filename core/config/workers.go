package config

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// WorkerConfig is one worker: a plain `opencode serve` on another machine that runs tasks placed
// on it (docs/rationale/workers.md). The password is never here: only the name of the
// environment variable the host reads it from.
type WorkerConfig struct {
	// URL is the worker's OpenCode server, absolute http(s), with no credentials in it.
	URL string `json:"url"`
	// Username is the basic auth user (OpenCode's default, "opencode", when unset).
	Username string `json:"username,omitempty"`
	// PasswordEnv names the environment variable that holds the worker's password.
	PasswordEnv string `json:"passwordEnv"`
	// Directory is the repository's path on the worker.
	Directory string `json:"directory"`
	// MaxTasks is how many tasks run on the worker at once.
	MaxTasks int `json:"maxTasks,omitempty"`
	// LostAfterMs is how long the worker's event stream may stay down before its running tasks
	// count as lost.
	LostAfterMs int64 `json:"lostAfterMs,omitempty"`
	// RestAfterMs is how long the worker may hold none of this parent's tasks before its event
	// stream is closed (it rests): the stream carries every session's events, other parents'
	// children's too, and reading them costs the parent's process. A task placed there opens it
	// again.
	RestAfterMs int64 `json:"restAfterMs,omitempty"`
	// Insecure allows http:// to a host that is not loopback.
	Insecure bool `json:"insecure,omitempty"`
	// RerunLost starts a task lost with its worker again (a new attempt, placed again) instead
	// of failing it.
	RerunLost bool `json:"rerunLost,omitempty"`
	// PollMs, when set, polls the worker instead of following its event stream: every PollMs
	// its health, its tasks' statuses and their pending questions are read, and a busy task's
	// newest messages every 5 s (or PollMs, if longer). The parent then reads only its own
	// tasks' state, not every session's stream, at the cost of ends and questions a poll late
	// and progress a few seconds behind (docs/rationale/workers_polled.md).
	PollMs int64 `json:"pollMs,omitempty"`
}

// Placement values of asyncagents_task's worker argument and of agents.<name>.worker, beside a
// worker's name.
const (
	WorkerLocal = "local"
	WorkerAuto  = "auto"
)

// WorkerNamePattern is what a worker's name must match (and it is neither "auto" nor "local").
const WorkerNamePattern = `^[a-z0-9][a-z0-9_-]*$`

// Patterns of the worker's string fields, shared with the schema.
const (
	WorkerURLPattern      = `^[hH][tT][tT][pP][sS]?://`
	WorkerUsernamePattern = `^[^:]+$`
	EnvNamePattern        = `^[A-Za-z_][A-Za-z0-9_]*$`
	AbsPathPattern        = `^(/|[A-Za-z]:[\\/])`
	// WorkerChoicePattern is agents.<name>.worker: a worker's name, "auto" or "local".
	WorkerChoicePattern = WorkerNamePattern
)

var workerNameRE = regexp.MustCompile(WorkerNamePattern)

// Worker defaults.
const (
	DefaultWorkerUsername    = "opencode"
	DefaultWorkerMaxTasks    = 4
	DefaultWorkerLostAfterMs = 60_000
	DefaultWorkerRestAfterMs = 60_000
	// MinWorkerPollMs keeps a polled worker from being asked more often than a stream would
	// cost.
	MinWorkerPollMs = 250
)

// WorkerRequired are the fields every worker must set.
var WorkerRequired = []string{"url", "passwordEnv", "directory"}

// ReservedWorkerNames may not name a worker: they are placements of their own.
var ReservedWorkerNames = []string{WorkerAuto, WorkerLocal}

const passwordRefusal = "put the password in an environment variable and name it in passwordEnv"

// withDefaults is w with its zero fields filled.
func (w WorkerConfig) withDefaults() WorkerConfig {
	if w.Username == "" {
		w.Username = DefaultWorkerUsername
	}
	if w.MaxTasks <= 0 {
		w.MaxTasks = DefaultWorkerMaxTasks
	}
	if w.LostAfterMs <= 0 {
		w.LostAfterMs = DefaultWorkerLostAfterMs
	}
	if w.RestAfterMs <= 0 {
		w.RestAfterMs = DefaultWorkerRestAfterMs
	}
	return w
}

// WorkerNames lists the configured workers, sorted.
func (c Config) WorkerNames() []string {
	names := make([]string, 0, len(c.Workers))
	for n := range c.Workers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// UnknownWorker is the refusal of a placement that names no configured worker.
func (c Config) UnknownWorker(name string) string {
	known := "none is configured (workers in asyncagents.json)"
	if names := c.WorkerNames(); len(names) > 0 {
		known = "the configured workers are " + strings.Join(names, ", ")
	}
	return fmt.Sprintf("unknown worker %q: %s; or use \"auto\" or \"local\"", name, known)
}

// CheckPlacement reports why a placement ("", "local", "auto" or a worker's name) is refused,
// "" when it is valid.
func (c Config) CheckPlacement(p string) string {
	if p == "" || p == WorkerLocal || p == WorkerAuto {
		return ""
	}
	if _, ok := c.Workers[p]; ok {
		return ""
	}
	return c.UnknownWorker(p)
}

// checkWorkerName refuses a worker's key.
func checkWorkerName(k string) string {
	switch {
	case contains(ReservedWorkerNames, k):
		return fmt.Sprintf("%q cannot name a worker: it is a placement of its own", k)
	case !workerNameRE.MatchString(k):
		return "a worker's name must match " + WorkerNamePattern + ", got " + strconv.Quote(k)
	}
	return ""
}

// checkWorker checks a worker's fields together, once each has its own type: the fields every
// worker needs, and the URL (absolute, no credentials, http only on loopback or when insecure).
func checkWorker(n *jnode) (field, msg string) {
	vals := map[string]*jnode{}
	for i, k := range n.keys {
		vals[k] = n.vals[i]
	}
	for _, k := range WorkerRequired {
		if vals[k] == nil {
			return "", "missing " + k
		}
	}
	u, err := url.Parse(vals["url"].str)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "url", "must be an absolute http:// or https:// URL, got " + vals["url"].render()
	}
	if u.User != nil {
		return "url", "must not hold a user or password: set username, and " + passwordRefusal
	}
	insecure := vals["insecure"] != nil && vals["insecure"].b
	if u.Scheme == "http" && !insecure && !IsLoopback(u.Hostname()) {
		return "url", fmt.Sprintf("http:// is only allowed on loopback (127.0.0.1, ::1, localhost): use https:// for %s, or set insecure: true (the password and the work then cross the network in clear)", u.Hostname())
	}
	return "", ""
}

// IsLoopback reports whether host is localhost or a loopback address.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// workerRule is the rule of one workers.<name> entry.
func workerRule() *rule {
	text := func(pattern, want string) *rule {
		return &rule{kind: ruleText, pattern: pattern, want: want}
	}
	r := object(
		field{"url", text(WorkerURLPattern, "an http:// or https:// URL")},
		field{"username", text(WorkerUsernamePattern, "a user name without \":\"")},
		field{"passwordEnv", text(EnvNamePattern, "an environment variable's name")},
		field{"directory", text(AbsPathPattern, "an absolute path")},
		field{"maxTasks", &rule{kind: ruleInt, min: 1}},
		field{"lostAfterMs", &rule{kind: ruleInt, min: 1000}},
		field{"restAfterMs", &rule{kind: ruleInt, min: 1000}},
		field{"insecure", &rule{kind: ruleBool}},
		field{"rerunLost", &rule{kind: ruleBool}},
		field{"pollMs", &rule{kind: ruleInt, min: MinWorkerPollMs}},
	)
	r.required = WorkerRequired
	r.after = checkWorker
	r.refuse = map[string]string{"password": passwordRefusal}
	return r
}

// setWorker applies a checked workers.<name> entry: it replaces that worker as a whole.
func setWorker(c *Config, name string, n *jnode) {
	var w WorkerConfig
	for i, k := range n.keys {
		v := n.vals[i]
		switch k {
		case "url":
			w.URL = v.str
		case "username":
			w.Username = v.str
		case "passwordEnv":
			w.PasswordEnv = v.str
		case "directory":
			w.Directory = v.str
		case "maxTasks":
			x, _ := v.integer()
			w.MaxTasks = int(x)
		case "lostAfterMs":
			w.LostAfterMs, _ = v.integer()
		case "restAfterMs":
			w.RestAfterMs, _ = v.integer()
		case "insecure":
			w.Insecure = v.b
		case "rerunLost":
			w.RerunLost = v.b
		case "pollMs":
			w.PollMs, _ = v.integer()
		}
	}
	if c.Workers == nil {
		c.Workers = map[string]WorkerConfig{}
	}
	c.Workers[name] = w
}

// checkAgentWorkers refuses an agents.<name>.worker naming no configured worker, once every layer
// is applied (a worker may be set in another file than the agent). origin names the source that
// set each agent.
func checkAgentWorkers(c Config, origin map[string]string) error {
	names := make([]string, 0, len(c.Agents))
	for n := range c.Agents {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if why := c.CheckPlacement(c.Agents[n].Worker); why != "" {
			file := origin[n]
			if file == "" {
				file = OptionsSource
			}
			return &ConfigError{File: file, Field: joinField(joinField("agents", n), "worker"), Msg: why}
		}
	}
	return nil
}

func copyWorkers(m map[string]WorkerConfig) map[string]WorkerConfig {
	if m == nil {
		return nil
	}
	out := make(map[string]WorkerConfig, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
