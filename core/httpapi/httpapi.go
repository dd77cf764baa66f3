package httpapi

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/history"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/core/view"
)

// The HTTP status API, as pure functions: a host hands every request it receives to ServeTasks
// with the current tasks and the time, and writes back the answer. The host owns the socket,
// the SSE connections and the task session's messages (for /logs); the core decides everything
// else: routing, the Host check, authentication, filters, pagination, stats and error texts.

// Request is what a host passes for every request it receives.
type Request struct {
	Method string `json:"method"`
	// Port is the port the server listens on: a request's Origin is the server's own only when
	// it names this port (apiOwnOrigin). Zero means the host did not say, and then no Origin is.
	Port int `json:"port,omitempty"`
	// Path is the request's path as sent, percent-escaped (Go: r.URL.EscapedPath(); Bun:
	// new URL(req.url).pathname), without the query. Each segment is unescaped by the core.
	Path string `json:"path"`
	// Query is the raw query string without "?", e.g. status=running&limit=10.
	Query string `json:"query"`
	// Headers holds the request's headers by lower-case name: host, authorization, origin,
	// last-event-id. Only the first value of a repeated header is needed.
	Headers map[string]string `json:"headers"`
	// Subscribers is how many SSE streams are open on this server now (for the limit).
	Subscribers int `json:"subscribers"`
	// Body is a POST's body, at most MaxRequestBodyBytes (a host passes one byte more when it is
	// longer, and the core refuses it).
	Body string `json:"body,omitempty"`
	// Entropy is fresh random text from the host (32 random bytes, hex) with every POST: the
	// dashboard's one-time codes are made of it (dashboard_code.go), since the core has no
	// randomness of its own.
	Entropy string `json:"entropy,omitempty"`
}

// Remote is how a host reaches a worker: basic auth with Username and the password in the
// environment variable PasswordEnv (the core never sees the password itself). Insecure allows
// http:// off loopback.
type Remote struct {
	URL         string `json:"url"`
	Username    string `json:"username"`
	PasswordEnv string `json:"passwordEnv"`
	Insecure    bool   `json:"insecure,omitempty"`
}

// Response is what the host writes back.
type Response struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	// Body is JSON text, or for a stream the first SSE frames. Empty for 204 and for Logs.
	Body string `json:"body"`
	// Stream: keep the connection open as text/event-stream after writing Body; the host then
	// writes the frames the core emits as tasks change, and heartbeats.
	Stream bool `json:"stream,omitempty"`
	// Logs is a child session's ID: the host answers with that session's messages as a JSON array
	// (GET /v1/tasks/:id/logs), with Status and Headers as given.
	Logs string `json:"logs,omitempty"`
	// Messages is a child session's ID, for GET /v1/tasks/:id/messages: a host that can read
	// OpenCode answers with that session's conversation (its messages through the messages op,
	// abi: Conversation); a host that cannot writes Body, the conversation the history keeps.
	Messages string `json:"messages,omitempty"`
	// Worker, Remote and Directory: a Logs or Messages session on a worker, which the host reads
	// there (Remote.URL, ?directory=Directory) as it carries out the session effects of that
	// worker's tasks; empty for a local session.
	Worker    string  `json:"worker,omitempty"`
	Remote    *Remote `json:"remote,omitempty"`
	Directory string  `json:"directory,omitempty"`
	// Asset names a file the host holds and answers with, as the body, with Status and Headers
	// as given: "dashboard" is the web dashboard's page (host/dashboard/dashboard.html), for GET /.
	Asset string `json:"asset,omitempty"`

	// Cancel is the task a POST /v1/tasks/:id/cancel may cancel, once every check passed, and
	// CancelReason the reason it records; the machine carries it out and answers with the task.
	// Never on the wire.
	Cancel       *task.Task `json:"-"`
	CancelReason string     `json:"-"`
	// Permission is a POST /v1/tasks/:id/permission that passed its checks (permission.go): the
	// machine forwards the answer and answers with the task. Never on the wire.
	Permission *PermissionAnswer `json:"-"`
	// Merge is the task a POST /v1/tasks/:id/merge merges (or discards, MergeDiscard), once every
	// check passed (merge.go): the machine carries it out. Never on the wire.
	Merge        *task.Task `json:"-"`
	MergeDiscard bool       `json:"-"`

	// mint and trade mark a POST /v1/dashboard/code or /session that passed its checks, for
	// Codes.Finish, which holds the codes (dashboard_code.go).
	mint  bool
	trade string
}

// API limits and defaults.
const (
	APIDefaultLimit          = 50
	APIMaxLimit              = 200
	APIDefaultMaxSubscribers = 128
)

// Header values the API sends.
const (
	apiContentTypeJSON   = "application/json; charset=utf-8"
	apiContentTypeStream = "text/event-stream"
	apiAllowMethods      = "GET, OPTIONS"
	apiAllowHeaders      = "Content-Type, Authorization"
	// apiMaxEcho bounds how much of a client's input an error message repeats.
	apiMaxEcho = 100
)

// apiStatusNames are the task statuses a status filter accepts, in the order errors list them.
var apiStatusNames = []task.Status{task.StatusRunning, task.StatusCompleted, task.StatusError, task.StatusCancelled, task.StatusResumed}

// ServeTasks answers one request over tasks, in launch order as Machine.Tasks returns them; it
// never changes them. It never panics: a bug comes back as a 500 with a JSON error.
//
// Order of checks: Host (403), a foreign Origin without a token (403), OPTIONS (204), path
// encoding (400), method (405), /v1/health (no auth), query encoding (400), the page / (no
// auth), the cancel (apiServeCancel), authentication (401), route (404), parameters (400),
// subscriber limit (503).
func ServeTasks(req Request, tasks []task.Task, cfg config.APIConfig, now int64) Response {
	r := Serve(req, apiPtrs(tasks), cfg, now)
	if r.Cancel != nil || r.Merge != nil {
		// Nothing is changed here: a cancel is the machine's.
		return apiFail(500, "internal error: a cancel needs the machine (Machine.ServeHTTPEffects)")
	}
	if r.mint || r.trade != "" {
		return apiFail(500, "internal error: a dashboard code needs the machine's codes (Codes.Finish)")
	}
	return r
}

// apiOut is the copy of a task the API shows: as Machine.Tasks shows it, with lastTools an
// array even before the first tool, and how a page shows it (view.TaskOf). The copy is
// shallow; the task itself is not changed.
func apiOut(t *task.Task, now int64) *task.Task {
	history.Load(t)
	c := *t
	Shown(&c, now)
	return &c
}

// Shown makes t, a copy of a task, the API's: lastTools an array even before the first tool,
// and its view at now set. Every task the API writes goes through it, its event frames included.
func Shown(t *task.Task, now int64) {
	if t.Progress.LastTools == nil {
		t.Progress.LastTools = []string{}
	}
	t.View = view.TaskOf(t, now)
}

// apiOutAll is apiOut for tasks[i] for each i of idx, in one allocation.
func apiOutAll(tasks []*task.Task, idx []int, now int64) []*task.Task {
	copies := make([]task.Task, len(idx))
	out := make([]*task.Task, len(idx))
	for k, i := range idx {
		history.Load(tasks[i])
		copies[k] = *tasks[i]
		Shown(&copies[k], now)
		out[k] = &copies[k]
	}
	return out
}

func apiPtrs(tasks []task.Task) []*task.Task {
	out := make([]*task.Task, len(tasks))
	for i := range tasks {
		out[i] = &tasks[i]
	}
	return out
}

// Serve is ServeTasks over tasks shared, not copied: a task a restore read only the head of is
// read whole where an answer needs more (history.Load), and nothing else in them changes.
func Serve(req Request, tasks []*task.Task, cfg config.APIConfig, now int64) (resp Response) {
	defer func() {
		if p := recover(); p != nil {
			resp = apiFail(500, fmt.Sprintf("internal error: %v", p))
		}
		if apiAuthNone(cfg) {
			apiStripCORS(resp.Headers)
		}
	}()

	host, hasHost := apiHeader(req.Headers, "host")
	if !hasHost || host == "" {
		return apiFail(403, "forbidden: missing Host header")
	}
	if !apiLoopbackHost(host) {
		return apiFail(403, fmt.Sprintf("forbidden: Host %s is not a loopback address (use 127.0.0.1 or localhost)", apiEcho(host)))
	}
	if origin, ok := apiHeader(req.Headers, "origin"); ok && apiAuthNone(cfg) && !apiOwnOrigin(req) {
		// Without a token, any page the user opens could read the API from the browser: only
		// the server's own pages, and clients that send no Origin, are answered.
		return apiFail(403, fmt.Sprintf("forbidden: Origin %s is not this server's own; without a token (ASYNCAGENTS_API_AUTH=none) the API answers its own dashboard and clients that send no Origin", apiEcho(origin)))
	}
	if req.Method == "OPTIONS" {
		return apiPreflight()
	}

	path, rawQuery := req.Path, req.Query
	if i := strings.IndexByte(path, '?'); i >= 0 {
		// A host that passed the query inside the path: take it from there.
		if rawQuery == "" {
			rawQuery = path[i+1:]
		}
		path = path[:i]
	}
	segs, ok := apiSplitPath(path)
	if !ok {
		return apiFail(400, fmt.Sprintf("malformed path %s: bad percent-encoding", apiEcho(path)))
	}
	isCancel := len(segs) == 4 && segs[0] == "v1" && segs[1] == "tasks" && segs[2] != "" && segs[3] == "cancel"
	isPermission := len(segs) == 4 && segs[0] == "v1" && segs[1] == "tasks" && segs[2] != "" && segs[3] == "permission"
	isMerge := len(segs) == 4 && segs[0] == "v1" && segs[1] == "tasks" && segs[2] != "" && segs[3] == "merge"
	isDashboard := len(segs) == 3 && segs[0] == "v1" && segs[1] == "dashboard" && (segs[2] == "code" || segs[2] == "session")
	if req.Method != "GET" && !(req.Method == "POST" && (isCancel || isPermission || isMerge || isDashboard)) {
		r := apiFail(405, fmt.Sprintf("method %s not allowed on %s: the API is read-only (GET, OPTIONS) but for POST /v1/tasks/:id/cancel, /v1/tasks/:id/permission, /v1/dashboard/code and /v1/dashboard/session", apiEcho(req.Method), apiEcho(path)))
		r.Headers["Allow"] = apiAllowMethods
		return r
	}
	if len(segs) == 2 && segs[0] == "v1" && segs[1] == "health" {
		return apiServeHealth(tasks, cfg, now)
	}

	q, ok := apiParseQuery(rawQuery)
	if !ok {
		return apiFail(400, "malformed query string: a bad percent-encoding, or a ';' between parameters")
	}
	if len(segs) == 1 && segs[0] == "" {
		return apiServePage(q)
	}
	if isCancel && req.Method == "POST" {
		return apiServeCancel(req, tasks, segs[2], q, cfg)
	}
	if isMerge && req.Method == "POST" {
		return apiServeMerge(req, tasks, segs[2], q, cfg)
	}
	if isPermission && req.Method == "POST" {
		return apiServePermission(req, tasks, segs[2], q, cfg)
	}
	if isDashboard && req.Method == "POST" {
		return apiServeDashboard(req, segs[2], q, cfg)
	}
	isEvents := len(segs) == 2 && segs[0] == "v1" && segs[1] == "events"
	if r, denied := apiAuthorize(req, q, isEvents, cfg); denied {
		return r
	}

	switch {
	case len(segs) < 2 || segs[0] != "v1":
	case len(segs) == 2 && segs[1] == "stats":
		return apiJSON(apiComputeStats(tasks, now))
	case len(segs) == 2 && segs[1] == "workers":
		body := cfg.Workers
		if body == "" {
			body = `{"workers":[]}`
		}
		return Response{Status: 200, Headers: apiJSONHeaders(), Body: body}
	case len(segs) == 2 && segs[1] == "tasks":
		return apiServeList(tasks, q, now)
	case len(segs) == 3 && segs[1] == "tasks" && segs[2] != "":
		t := apiFindTask(tasks, segs[2])
		if t == nil {
			return apiFail(404, fmt.Sprintf("task %s not found", apiEcho(segs[2])))
		}
		return apiJSON(apiOut(t, now))
	case len(segs) == 4 && segs[1] == "tasks" && segs[2] != "" && segs[3] == "logs":
		t := apiFindTask(tasks, segs[2])
		if t == nil {
			return apiFail(404, fmt.Sprintf("task %s not found", apiEcho(segs[2])))
		}
		if t.ChildSession() == "" {
			return Response{Status: 200, Headers: apiJSONHeaders(), Body: "[]"} // queued: no session yet
		}
		return Response{Status: 200, Headers: apiJSONHeaders(), Logs: t.ChildSession()}
	case len(segs) == 4 && segs[1] == "tasks" && segs[2] != "" && segs[3] == "messages":
		t := apiFindTask(tasks, segs[2])
		if t == nil {
			return apiFail(404, fmt.Sprintf("task %s not found", apiEcho(segs[2])))
		}
		return apiServeMessages(t, now)
	case len(segs) == 3 && segs[1] == "task-groups" && segs[2] != "":
		return apiServeGroup(tasks, segs[2], now)
	case isEvents:
		return apiServeEvents(req, tasks, q, cfg, now)
	case len(segs) >= 3 && segs[1] == "views":
		return apiServeView(tasks, segs[2:], q, cfg, now)
	}
	return apiFail(404, fmt.Sprintf("not found: no route GET %s (routes: /, /v1/health, /v1/stats, /v1/workers, /v1/tasks, /v1/tasks/:id, /v1/tasks/:id/logs, /v1/tasks/:id/messages, POST /v1/tasks/:id/cancel, POST /v1/dashboard/code, POST /v1/dashboard/session, /v1/task-groups/:id, /v1/events, /v1/views/tasks, /v1/views/session/:id)", apiEcho(path)))
}

// apiFindTask finds a task by its ID or its child session's.
func apiFindTask(tasks []*task.Task, id string) *task.Task {
	for i := range tasks {
		if tasks[i].ID == id || tasks[i].SessionID == id {
			return tasks[i]
		}
	}
	return nil
}

// --- security ---

// apiLoopbackHost reports whether a Host header names this machine's loopback interface:
// localhost, 127.0.0.0/8 in dotted decimal, [::1] or ::1, each with or without :port. Anything
// else (a DNS name that now resolves to 127.0.0.1, say) is a DNS-rebinding attempt. The address
// is net/netip's to read: it refuses an IPv4 octet with a leading zero, which some resolvers read
// as octal (0177.0.0.1), and the forms 127.1 and 2130706433.
func apiLoopbackHost(host string) bool {
	name, port := host, ""
	switch {
	case strings.HasPrefix(host, "["):
		end := strings.IndexByte(host, ']')
		if end < 0 || !strings.Contains(host[:end], ":") {
			return false // only an IPv6 address goes in brackets
		}
		name, port = host[1:end], host[end+1:]
	case strings.Count(host, ":") == 1:
		i := strings.IndexByte(host, ':')
		name, port = host[:i], host[i:]
	}
	if port != "" && !apiValidPort(port) {
		return false
	}
	if strings.EqualFold(name, "localhost") {
		return true
	}
	addr, err := netip.ParseAddr(name)
	if err != nil || addr.String() != name {
		return false // and only in its canonical form: [::1], not [0:0:0:0:0:0:0:1] or with a zone
	}
	return (addr.Is4() && addr.As4()[0] == 127) || addr == netip.IPv6Loopback()
}

// apiValidPort accepts ":" followed by 1 to 5 digits naming a port from 1 to 65535.
func apiValidPort(s string) bool {
	if len(s) < 2 || len(s) > 6 || s[0] != ':' {
		return false
	}
	n := 0
	for i := 1; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(c-'0')
	}
	return n >= 1 && n <= 65535
}

// --- responses ---

// apiBaseHeaders are on every response: CORS (taken off again while no token is required, see
// apiStripCORS), and no MIME sniffing.
func apiBaseHeaders() map[string]string {
	return map[string]string{
		"Access-Control-Allow-Origin":  "*",
		"Access-Control-Allow-Methods": apiAllowMethods,
		"Access-Control-Allow-Headers": apiAllowHeaders,
		"X-Content-Type-Options":       "nosniff",
	}
}

// apiStripCORS takes the CORS grant off an answer. "*" is only safe while a token is required:
// a page of another origin holds no token, so it reads nothing. Without one, that page could
// read everything.
func apiStripCORS(h map[string]string) {
	for k := range h {
		if strings.HasPrefix(k, "Access-Control-") {
			delete(h, k)
		}
	}
}

func apiJSONHeaders() map[string]string {
	h := apiBaseHeaders()
	h["Content-Type"] = apiContentTypeJSON
	h["Cache-Control"] = "no-store"
	return h
}

func apiPreflight() Response {
	h := apiBaseHeaders()
	h["Access-Control-Max-Age"] = "600"
	return Response{Status: 204, Headers: h}
}

func apiJSON(v any) Response {
	b, err := json.Marshal(v)
	if err != nil {
		return apiFail(500, "internal error: encoding the response failed: "+err.Error())
	}
	return Response{Status: 200, Headers: apiJSONHeaders(), Body: string(b)}
}

type apiErrorBody struct {
	Error string `json:"error"`
}

// Fail is an error answer, {"error": msg}, for the machine's own refusals.
func Fail(status int, msg string) Response { return apiFail(status, msg) }

func apiFail(status int, msg string) Response {
	b, _ := json.Marshal(apiErrorBody{Error: msg})
	return Response{Status: status, Headers: apiJSONHeaders(), Body: string(b)}
}
