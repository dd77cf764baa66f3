package core

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// The HTTP status API, as pure functions: a host hands every request it receives to ServeHTTP
// with the current tasks and the time, and writes back the answer. The host owns the socket,
// the SSE connections and the task session's messages (for /logs); the core decides everything
// else: routing, the Host check, authentication, filters, pagination, stats and error texts.

// HTTPRequest is what a host passes for every request it receives.
type HTTPRequest struct {
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
	// cookie, last-event-id. Only the first value of a repeated header is needed.
	Headers map[string]string `json:"headers"`
	// Subscribers is how many SSE streams are open on this server now (for the limit).
	Subscribers int `json:"subscribers"`
}

// HTTPResponse is what the host writes back.
type HTTPResponse struct {
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
	// Asset names a file the host holds and answers with, as the body, with Status and Headers
	// as given: "dashboard" is the web dashboard's page (host/dashboard/dashboard.html), for GET /.
	Asset string `json:"asset,omitempty"`

	// cancel is the task a POST /v1/tasks/:id/cancel may cancel, once every check passed; the
	// machine carries it out (Machine.ServeHTTPEffects) and answers with the task.
	cancel       *Task
	cancelReason string
}

// APIConfig is the HTTP API's configuration.
type APIConfig struct {
	// Token is the bearer token required on everything but /v1/health and OPTIONS.
	Token string `json:"token,omitempty"`
	// Auth is "token" (the default; any value but "none" means it) or "none"
	// (ASYNCAGENTS_API_AUTH=none), which turns the token check off.
	Auth string `json:"auth,omitempty"`
	// MaxSubscribers is how many SSE streams may be open at once (default 128, room for the 100 subscribers the benchmark feeds); past it
	// /v1/events answers 503.
	MaxSubscribers int `json:"maxSubscribers,omitempty"`
	// StartedAt is when the server started (Unix ms), for the uptime.
	StartedAt int64 `json:"startedAt,omitempty"`
	// Version is reported by /v1/health; empty means the core's Version.
	Version string `json:"version,omitempty"`
	// ReadOnly marks a server that only reads the stored history (asyncagents serve): it cannot
	// cancel a task, which the plugin's OpenCode runs.
	ReadOnly bool `json:"readOnly,omitempty"`
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
var apiStatusNames = []Status{StatusRunning, StatusCompleted, StatusError, StatusCancelled, StatusResumed}

// ServeHTTP answers one request over tasks, in launch order as Machine.Tasks returns them; it
// never changes them. It never panics: a bug comes back as a 500 with a JSON error.
//
// Order of checks: Host (403), a foreign Origin without a token (403), OPTIONS (204), path
// encoding (400), method (405), /v1/health (no auth), query encoding (400), the page / (no
// auth), the cancel (apiServeCancel), authentication (401), route (404), parameters (400),
// subscriber limit (503).
func ServeHTTP(req HTTPRequest, tasks []Task, cfg APIConfig, now int64) HTTPResponse {
	r := apiServe(req, apiPtrs(tasks), cfg, now)
	if r.cancel != nil {
		// Nothing is changed here: a cancel is the machine's (Machine.ServeHTTPEffects).
		return apiFail(500, "internal error: a cancel needs the machine (Machine.ServeHTTPEffects)")
	}
	return r
}

// ServeHTTP answers one request from the machine's own tasks, without copying them (see the
// package-level ServeHTTP; Machine.Tasks copies every task, which at 10,000 tasks costs more than
// the request itself). The tasks are only read.
func (m *Machine) ServeHTTP(req HTTPRequest, cfg APIConfig, now int64) HTTPResponse {
	key, cacheable := apiCacheKey(req, cfg)
	if cacheable {
		if r, ok := m.apiCache.get(key); ok {
			return r
		}
	}
	r := apiServe(req, m.apiView(), cfg, now)
	if cacheable {
		m.apiCache.put(key, r)
	}
	return r
}

// apiView lists the machine's tasks in launch order, shared, not copied: for reading only. It is
// kept between requests and rebuilt after storeChanged.
func (m *Machine) apiView() []*Task {
	if m.view == nil {
		m.view = m.freshView()
	}
	return m.view
}

// storeChanged drops the cached view: call it whenever a task is added to or removed from the
// store, or the launch order changes.
func (m *Machine) storeChanged() { m.view = nil }

// freshView resolves the launch order to tasks.
func (m *Machine) freshView() []*Task {
	out := make([]*Task, 0, len(m.order))
	for _, id := range m.order {
		if t, ok := m.tasks[id]; ok {
			out = append(out, t)
		}
	}
	return out
}

// apiOut is the copy of a task the API shows: as Machine.Tasks shows it, with lastTools an
// array even before the first tool. The copy is shallow; the task itself is not changed.
func apiOut(t *Task) *Task {
	t.load()
	c := *t
	if c.Progress.LastTools == nil {
		c.Progress.LastTools = []string{}
	}
	return &c
}

// apiOutAll is apiOut for tasks[i] for each i of idx, in one allocation.
func apiOutAll(tasks []*Task, idx []int) []*Task {
	copies := make([]Task, len(idx))
	out := make([]*Task, len(idx))
	for k, i := range idx {
		tasks[i].load()
		copies[k] = *tasks[i]
		if copies[k].Progress.LastTools == nil {
			copies[k].Progress.LastTools = []string{}
		}
		out[k] = &copies[k]
	}
	return out
}

func apiPtrs(tasks []Task) []*Task {
	out := make([]*Task, len(tasks))
	for i := range tasks {
		out[i] = &tasks[i]
	}
	return out
}

func apiServe(req HTTPRequest, tasks []*Task, cfg APIConfig, now int64) (resp HTTPResponse) {
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
	if req.Method != "GET" && !(req.Method == "POST" && isCancel) {
		r := apiFail(405, fmt.Sprintf("method %s not allowed on %s: the API is read-only (GET, OPTIONS) but for POST /v1/tasks/:id/cancel", apiEcho(req.Method), apiEcho(path)))
		r.Headers["Allow"] = apiAllowMethods
		return r
	}
	if len(segs) == 2 && segs[0] == "v1" && segs[1] == "health" {
		return apiServeHealth(tasks, cfg, now)
	}

	q, ok := apiParseQuery(rawQuery)
	if !ok {
		return apiFail(400, "malformed query string: bad percent-encoding")
	}
	if len(segs) == 1 && segs[0] == "" {
		return apiServePage(req, q, cfg)
	}
	if isCancel && req.Method == "POST" {
		return apiServeCancel(req, tasks, segs[2], q, cfg)
	}
	isEvents := len(segs) == 2 && segs[0] == "v1" && segs[1] == "events"
	if r, denied := apiAuthorize(req, q, isEvents, cfg); denied {
		return r
	}

	switch {
	case len(segs) < 2 || segs[0] != "v1":
	case len(segs) == 2 && segs[1] == "stats":
		return apiJSON(apiComputeStats(tasks, now))
	case len(segs) == 2 && segs[1] == "tasks":
		return apiServeList(tasks, q)
	case len(segs) == 3 && segs[1] == "tasks" && segs[2] != "":
		t := apiFindTask(tasks, segs[2])
		if t == nil {
			return apiFail(404, fmt.Sprintf("task %s not found", apiEcho(segs[2])))
		}
		return apiJSON(apiOut(t))
	case len(segs) == 4 && segs[1] == "tasks" && segs[2] != "" && segs[3] == "logs":
		t := apiFindTask(tasks, segs[2])
		if t == nil {
			return apiFail(404, fmt.Sprintf("task %s not found", apiEcho(segs[2])))
		}
		if t.childSession() == "" {
			return HTTPResponse{Status: 200, Headers: apiJSONHeaders(), Body: "[]"} // queued: no session yet
		}
		return HTTPResponse{Status: 200, Headers: apiJSONHeaders(), Logs: t.childSession()}
	case len(segs) == 3 && segs[1] == "task-groups" && segs[2] != "":
		return apiServeGroup(tasks, segs[2], now)
	case isEvents:
		return apiServeEvents(req, tasks, q, cfg, now)
	}
	return apiFail(404, fmt.Sprintf("not found: no route GET %s (routes: /, /v1/health, /v1/stats, /v1/tasks, /v1/tasks/:id, /v1/tasks/:id/logs, POST /v1/tasks/:id/cancel, /v1/task-groups/:id, /v1/events)", apiEcho(path)))
}

// --- routes ---

// APIHealth is /v1/health's answer.
type APIHealth struct {
	Status    string `json:"status"`
	Uptime    int64  `json:"uptime"` // seconds
	Version   string `json:"version"`
	TaskCount int    `json:"taskCount"`
	// ReadOnly: this server cannot cancel (asyncagents serve); the dashboard offers no cancel.
	ReadOnly bool `json:"readOnly,omitempty"`
}

func apiServeHealth(tasks []*Task, cfg APIConfig, now int64) HTTPResponse {
	h := APIHealth{Status: "ok", Version: cfg.Version, TaskCount: len(tasks), ReadOnly: cfg.ReadOnly}
	if h.Version == "" {
		h.Version = Version
	}
	if cfg.StartedAt > 0 && now > cfg.StartedAt {
		h.Uptime = (now - cfg.StartedAt) / 1000
	}
	return apiJSON(h)
}

// APIStats is /v1/stats's answer, and the stats of an SSE snapshot.
type APIStats struct {
	// ByStatus has every status, zero or not.
	ByStatus map[string]int `json:"byStatus"`
	ByAgent  map[string]int `json:"byAgent"`
	// Duration is over finished (completed, error, cancelled) tasks.
	Duration    APIDurationStats `json:"duration"`
	TotalTasks  int              `json:"totalTasks"`
	ActiveTasks int              `json:"activeTasks"`
}

// APIDurationStats are in milliseconds; all zero when Count is 0. Avg is rounded to the nearest ms.
type APIDurationStats struct {
	Avg   int64 `json:"avg"`
	Max   int64 `json:"max"`
	Min   int64 `json:"min"`
	Count int   `json:"count"`
}

func apiComputeStats(tasks []*Task, now int64) APIStats {
	s := APIStats{ByStatus: make(map[string]int, len(apiStatusNames)), ByAgent: map[string]int{}, TotalTasks: len(tasks)}
	for _, st := range apiStatusNames {
		s.ByStatus[string(st)] = 0
	}
	var sum int64
	for i := range tasks {
		t := tasks[i]
		s.ByStatus[string(t.Status)]++
		s.ByAgent[t.Agent]++
		if !t.Status.Terminal() {
			s.ActiveTasks++
			continue
		}
		d := t.Duration(now)
		if s.Duration.Count == 0 || d > s.Duration.Max {
			s.Duration.Max = d
		}
		if s.Duration.Count == 0 || d < s.Duration.Min {
			s.Duration.Min = d
		}
		s.Duration.Count++
		sum += d
	}
	if n := int64(s.Duration.Count); n > 0 {
		s.Duration.Avg = (sum + n/2) / n
	}
	return s
}

// APITaskList is /v1/tasks's answer. Total counts every matching task, before pagination.
type APITaskList struct {
	Tasks  []*Task `json:"tasks"`
	Total  int     `json:"total"`
	Limit  int     `json:"limit"`
	Offset int     `json:"offset"`
}

// apiListFilter is /v1/tasks's parsed query.
type apiListFilter struct {
	statuses []Status // any of these; none means all
	agent    string
	search   string // lower-cased
	ascii    bool   // search is ASCII, so it can be matched without allocating
	limit    int
	offset   int
}

func apiParseListQuery(q []apiQueryParam) (apiListFilter, string) {
	f := apiListFilter{limit: APIDefaultLimit}
	if v := apiQueryGet(q, "status"); v != "" {
		for _, name := range strings.Split(v, ",") {
			st := Status(strings.TrimSpace(name))
			if !slices.Contains(apiStatusNames, st) {
				return f, fmt.Sprintf("invalid status %s: allowed values are %s (or several, comma-separated)", apiEcho(v), apiJoinStatuses())
			}
			if !slices.Contains(f.statuses, st) {
				f.statuses = append(f.statuses, st)
			}
		}
	}
	f.agent = apiQueryGet(q, "agent")
	if v := apiQueryGet(q, "search"); v != "" {
		f.search = strings.ToLower(v)
		f.ascii = apiIsASCII(f.search)
	}
	if v := apiQueryGet(q, "limit"); v != "" {
		n, ok := apiParseCount(v)
		if !ok || n > APIMaxLimit {
			return f, fmt.Sprintf("invalid limit %s: must be an integer from 0 to %d (default %d)", apiEcho(v), APIMaxLimit, APIDefaultLimit)
		}
		f.limit = n
	}
	if v := apiQueryGet(q, "offset"); v != "" {
		n, ok := apiParseCount(v)
		if !ok {
			return f, fmt.Sprintf("invalid offset %s: must be an integer of 0 or more (default 0)", apiEcho(v))
		}
		f.offset = n
	}
	return f, ""
}

func (f *apiListFilter) match(t *Task) bool {
	if len(f.statuses) > 0 && !slices.Contains(f.statuses, t.Status) {
		return false
	}
	if f.agent != "" && t.Agent != f.agent {
		return false
	}
	if f.search != "" {
		if f.ascii {
			return apiContainsFoldASCII(t.Description, f.search)
		}
		return strings.Contains(strings.ToLower(t.Description), f.search)
	}
	return true
}

// apiServeList filters, sorts newest first and marshals only the page.
func apiServeList(tasks []*Task, q []apiQueryParam) HTTPResponse {
	f, bad := apiParseListQuery(q)
	if bad != "" {
		return apiFail(400, bad)
	}
	page, total := apiPage(tasks, &f)
	// Written as encoding/json writes APITaskList (TestAPITaskListEncodesAsTheStruct), with the
	// tasks' own encoder (appendTask).
	b := append(make([]byte, 0, 64+len(page)*1536), `{"tasks":[`...)
	for k, t := range apiOutAll(tasks, page) {
		if k > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendTask(b, t); err != nil {
			return apiFail(500, "internal error: encoding the response failed: "+err.Error())
		}
	}
	b = appendKeyInt(append(b, ']'), "total", int64(total))
	b = appendKeyInt(b, "limit", int64(f.limit))
	b = append(appendKeyInt(b, "offset", int64(f.offset)), '}')
	// b is not written again: the body is made of it, not copied from it, unless most of it is
	// unused (the answer cache counts a body's length, and would keep the whole buffer).
	if cap(b) > 2*len(b) {
		return HTTPResponse{Status: 200, Headers: apiJSONHeaders(), Body: string(b)}
	}
	return HTTPResponse{Status: 200, Headers: apiJSONHeaders(), Body: unsafe.String(&b[0], len(b))}
}

// apiPage returns the indexes of the page [offset, offset+limit) of the tasks f matches,
// ordered as apiNewestFirst orders them, and how many tasks f matches. Tasks arrive in
// launch order, which is nearly always startedAt order: then one backward pass that allocates
// only the page does it all; otherwise it sorts.
func apiPage(tasks []*Task, f *apiListFilter) (page []int, total int) {
	offset, limit := f.offset, f.limit
	var prev int64
	for i := len(tasks) - 1; i >= 0; i-- {
		t := tasks[i]
		if !f.match(t) {
			continue
		}
		if total > 0 && t.StartedAt > prev {
			// Out of start order: sort.
			all := apiNewestFirst(tasks, f.match)
			if offset >= len(all) {
				return nil, len(all)
			}
			return all[offset : offset+min(limit, len(all)-offset)], len(all)
		}
		prev = t.StartedAt
		if total >= offset && total-offset < limit {
			page = append(page, i)
		}
		total++
	}
	return page, total
}

// apiNewestFirst returns the indexes of the tasks keep accepts (all when keep is nil), newest first
// by startedAt; among equal start times, the later launch first. Tasks arrive in launch order,
// which is nearly always startedAt order, so the sort is usually a reversal.
func apiNewestFirst(tasks []*Task, keep func(*Task) bool) []int {
	type entry struct {
		startedAt int64
		i         int
	}
	matched := make([]entry, 0, len(tasks))
	sorted := true // ascending by startedAt, in input order
	for i := range tasks {
		t := tasks[i]
		if keep != nil && !keep(t) {
			continue
		}
		if n := len(matched); n > 0 && t.StartedAt < matched[n-1].startedAt {
			sorted = false
		}
		matched = append(matched, entry{t.StartedAt, i})
	}
	if sorted {
		slices.Reverse(matched)
	} else {
		slices.SortFunc(matched, func(a, b entry) int {
			switch {
			case a.startedAt > b.startedAt:
				return -1
			case a.startedAt < b.startedAt:
				return 1
			case a.i > b.i:
				return -1
			case a.i < b.i:
				return 1
			}
			return 0
		})
	}
	out := make([]int, len(matched))
	for k, e := range matched {
		out[k] = e.i
	}
	return out
}

// APITaskGroup is /v1/task-groups/:id's answer: the batch's tasks in launch order and its stats.
type APITaskGroup struct {
	BatchID string        `json:"batchId"`
	Tasks   []*Task       `json:"tasks"`
	Stats   APIGroupStats `json:"stats"`
}

// APIGroupStats aggregates a batch. Running counts every task still at work (running or
// resumed). CompletionRate is Completed / Total. Duration runs from the first start to the last
// completion, or to now while any task runs.
type APIGroupStats struct {
	Completed      int     `json:"completed"`
	Running        int     `json:"running"`
	Error          int     `json:"error"`
	Cancelled      int     `json:"cancelled"`
	Total          int     `json:"total"`
	CompletionRate float64 `json:"completionRate"`
	TotalToolCalls int     `json:"totalToolCalls"`
	Duration       int64   `json:"duration"`
}

func apiServeGroup(tasks []*Task, batchID string, now int64) HTTPResponse {
	g := APITaskGroup{BatchID: batchID}
	var first, last int64
	for i := range tasks {
		t := tasks[i]
		if t.BatchID != batchID {
			continue
		}
		g.Tasks = append(g.Tasks, apiOut(t)) // read whole (load): the stats below read past the head
		s := &g.Stats
		switch t.Status {
		case StatusCompleted:
			s.Completed++
		case StatusError:
			s.Error++
		case StatusCancelled:
			s.Cancelled++
		default:
			s.Running++
		}
		s.TotalToolCalls += t.Progress.ToolCalls
		end := t.StartedAt + t.Duration(now)
		if s.Total == 0 || t.StartedAt < first {
			first = t.StartedAt
		}
		if s.Total == 0 || end > last {
			last = end
		}
		s.Total++
	}
	if g.Stats.Total == 0 {
		return apiFail(404, fmt.Sprintf("task group %s not found", apiEcho(batchID)))
	}
	g.Stats.CompletionRate = float64(g.Stats.Completed) / float64(g.Stats.Total)
	if last > first {
		g.Stats.Duration = last - first
	}
	return apiJSON(g)
}

// apiServeEvents opens a stream. ?snapshot=stats opens it with the stats alone (tasks: []): a
// client that pages through the tasks itself, as the dashboard does, needs no copy of 10,000.
func apiServeEvents(req HTTPRequest, tasks []*Task, q []apiQueryParam, cfg APIConfig, now int64) HTTPResponse {
	limit := cfg.MaxSubscribers
	if limit <= 0 {
		limit = APIDefaultMaxSubscribers
	}
	if req.Subscribers >= limit {
		return apiFail(503, fmt.Sprintf("too many event streams: %d open, the limit is %d; try again later", req.Subscribers, limit))
	}
	h := apiBaseHeaders()
	h["Content-Type"] = apiContentTypeStream
	h["Cache-Control"] = "no-cache"
	if apiQueryGet(q, "snapshot") == "stats" {
		body := SSEFrame(SSESnapshot, SSESnapshotData{Tasks: []*Task{}, Stats: apiComputeStats(tasks, now)})
		return HTTPResponse{Status: 200, Headers: h, Body: body, Stream: true}
	}
	return HTTPResponse{Status: 200, Headers: h, Body: apiSnapshotFrame(tasks, now), Stream: true}
}

// apiFindTask finds a task by its ID or its child session's.
func apiFindTask(tasks []*Task, id string) *Task {
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
// else (a DNS name that now resolves to 127.0.0.1, say) is a DNS-rebinding attempt.
func apiLoopbackHost(host string) bool {
	name := host
	if strings.HasPrefix(host, "[") {
		end := strings.IndexByte(host, ']')
		if end < 0 {
			return false
		}
		name = host[1:end]
		if rest := host[end+1:]; rest != "" && !apiValidPort(rest) {
			return false
		}
		return name == "::1"
	}
	if host == "::1" {
		return true
	}
	if i := strings.IndexByte(host, ':'); i >= 0 {
		if !apiValidPort(host[i:]) {
			return false
		}
		name = host[:i]
	}
	return strings.EqualFold(name, "localhost") || apiLoopbackIPv4(name)
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

// apiLoopbackIPv4 accepts canonical dotted decimal (no leading zeros, which some resolvers read as
// octal) with 127 as the first octet.
func apiLoopbackIPv4(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 4 || parts[0] != "127" {
		return false
	}
	for _, p := range parts {
		if p == "" || len(p) > 3 || (len(p) > 1 && p[0] == '0') {
			return false
		}
		n := 0
		for i := 0; i < len(p); i++ {
			if p[i] < '0' || p[i] > '9' {
				return false
			}
			n = n*10 + int(p[i]-'0')
		}
		if n > 255 {
			return false
		}
	}
	return true
}

// apiAuthorize checks the token: the bearer token, the dashboard's cookie (apiCookieName) on a
// request from the server's own page or with no Origin, and for the event stream ?token= too,
// since EventSource cannot send headers. It answers the 401 when the request is refused. With
// auth "none" every request passes (apiServe has already refused foreign Origins).
func apiAuthorize(req HTTPRequest, q []apiQueryParam, queryToken bool, cfg APIConfig) (HTTPResponse, bool) {
	if apiAuthNone(cfg) {
		return HTTPResponse{}, false
	}
	return apiCheckToken(req, q, queryToken, cfg)
}

// apiCheckToken is apiAuthorize whatever the auth setting: what changes state needs it always.
func apiCheckToken(req HTTPRequest, q []apiQueryParam, queryToken bool, cfg APIConfig) (HTTPResponse, bool) {
	deny := func(msg string) (HTTPResponse, bool) {
		r := apiFail(401, msg)
		r.Headers["WWW-Authenticate"] = `Bearer realm="asyncagents"`
		return r, true
	}
	if cfg.Token == "" {
		// Fail closed: a server that requires a token but has none accepts no one.
		return deny("unauthorized: the server has no API token configured")
	}
	given := ""
	if v, _ := apiHeader(req.Headers, "authorization"); strings.TrimSpace(v) != "" {
		scheme, rest, _ := strings.Cut(strings.TrimSpace(v), " ")
		if !strings.EqualFold(scheme, "Bearer") {
			return deny("unauthorized: the Authorization header must be \"Bearer <token>\"")
		}
		given = strings.TrimSpace(rest)
	}
	if given == "" && queryToken {
		given = apiQueryGet(q, "token")
	}
	if given == "" {
		// The dashboard's cookie counts only on a request from its own page (or one with no
		// Origin, as a same-origin GET is sent): SameSite ignores ports, so another server on
		// 127.0.0.1 is the same site and its pages could send it.
		if c := apiCookie(req.Headers, apiCookieName(req.Port)); c != "" {
			if _, hasOrigin := apiHeader(req.Headers, "origin"); !hasOrigin || apiOwnOrigin(req) {
				if apiTokenEqual(c, apiCookieValue(cfg.Token)) {
					return HTTPResponse{}, false
				}
				return deny("unauthorized: the dashboard's cookie is not this server's (it restarted with a new token): open the dashboard again with asyncagents dashboard")
			}
		}
	}
	if given == "" {
		if queryToken {
			return deny("unauthorized: missing token (send Authorization: Bearer <token>, or ?token=<token> on /v1/events)")
		}
		return deny("unauthorized: missing token (send Authorization: Bearer <token>)")
	}
	if !apiTokenEqual(given, cfg.Token) {
		return deny("unauthorized: invalid token")
	}
	return HTTPResponse{}, false
}

// apiAuthNone reports whether the token check is off (ASYNCAGENTS_API_AUTH=none).
func apiAuthNone(cfg APIConfig) bool {
	return strings.EqualFold(strings.TrimSpace(cfg.Auth), "none")
}

// apiOwnOrigin reports whether the request comes from the server's own pages: its Origin is
// http:// and the Host it was sent to, and that Host is 127.0.0.1 or localhost with the port the
// server listens on. A browser sets both headers itself, so a page of any other origin (another
// port of 127.0.0.1 included) cannot pass.
func apiOwnOrigin(req HTTPRequest) bool {
	origin, ok := apiHeader(req.Headers, "origin")
	host, _ := apiHeader(req.Headers, "host")
	if !ok || req.Port <= 0 {
		return false
	}
	name, port, hasPort := strings.Cut(host, ":")
	if name != "127.0.0.1" && !strings.EqualFold(name, "localhost") {
		return false
	}
	if hasPort && port != strconv.Itoa(req.Port) || !hasPort && req.Port != 80 {
		return false
	}
	return strings.EqualFold(origin, "http://"+host)
}

// apiTokenEqual compares in time that does not depend on where the tokens differ.
func apiTokenEqual(given, want string) bool {
	return subtle.ConstantTimeCompare([]byte(given), []byte(want)) == 1
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

func apiPreflight() HTTPResponse {
	h := apiBaseHeaders()
	h["Access-Control-Max-Age"] = "600"
	return HTTPResponse{Status: 204, Headers: h}
}

func apiJSON(v any) HTTPResponse {
	b, err := json.Marshal(v)
	if err != nil {
		return apiFail(500, "internal error: encoding the response failed: "+err.Error())
	}
	return HTTPResponse{Status: 200, Headers: apiJSONHeaders(), Body: string(b)}
}

type apiErrorBody struct {
	Error string `json:"error"`
}

func apiFail(status int, msg string) HTTPResponse {
	b, _ := json.Marshal(apiErrorBody{Error: msg})
	return HTTPResponse{Status: status, Headers: apiJSONHeaders(), Body: string(b)}
}

// apiEcho quotes client input for an error message, cut to apiMaxEcho bytes on a rune boundary.
func apiEcho(s string) string {
	if len(s) > apiMaxEcho {
		cut := apiMaxEcho
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return strconv.Quote(s)
}

func apiJoinStatuses() string {
	names := make([]string, len(apiStatusNames))
	for i, s := range apiStatusNames {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// --- request parsing ---

// apiHeader finds a header by its lower-case name, tolerating a host that kept the original case.
func apiHeader(h map[string]string, name string) (string, bool) {
	if v, ok := h[name]; ok {
		return v, true
	}
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

// apiSplitPath splits "/v1/tasks/x" into unescaped segments ["v1" "tasks" "x"]. A trailing slash
// gives a last empty segment, which no route accepts.
func apiSplitPath(p string) ([]string, bool) {
	if !strings.HasPrefix(p, "/") {
		return nil, true
	}
	segs := strings.Split(p[1:], "/")
	for i, s := range segs {
		if strings.IndexByte(s, '%') < 0 {
			continue
		}
		u, err := url.PathUnescape(s)
		if err != nil {
			return nil, false
		}
		segs[i] = u
	}
	return segs, true
}

type apiQueryParam struct{ key, value string }

// apiParseQuery splits a query string on "&" into unescaped pairs ("+" is a space), in order.
func apiParseQuery(raw string) ([]apiQueryParam, bool) {
	var out []apiQueryParam
	for raw != "" {
		var part string
		part, raw, _ = strings.Cut(raw, "&")
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		k, err1 := url.QueryUnescape(k)
		v, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			return nil, false
		}
		out = append(out, apiQueryParam{k, v})
	}
	return out, true
}

// apiQueryGet returns the first value of key; a parameter given empty counts as not given.
func apiQueryGet(q []apiQueryParam, key string) string {
	for _, p := range q {
		if p.key == key {
			return p.value
		}
	}
	return ""
}

// apiParseCount parses a non-negative decimal integer of at most 9 digits.
func apiParseCount(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

func apiIsASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// apiContainsFoldASCII reports whether s contains the lower-case ASCII needle, ignoring ASCII case,
// without allocating.
func apiContainsFoldASCII(s, needle string) bool {
	n := len(needle)
	if n == 0 {
		return true
	}
	first := needle[0]
	for i := 0; i+n <= len(s); i++ {
		if apiLowerASCII(s[i]) != first {
			continue
		}
		j := 1
		for j < n && apiLowerASCII(s[i+j]) == needle[j] {
			j++
		}
		if j == n {
			return true
		}
	}
	return false
}

func apiLowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}
