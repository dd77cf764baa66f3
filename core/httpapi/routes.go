package httpapi

import (
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/history"
	"github.com/asyncagents/asyncagents/core/internal/jsonw"
	"github.com/asyncagents/asyncagents/core/internal/version"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/core/text"
	"github.com/asyncagents/asyncagents/core/view"
)

// The routes' answers: /v1/health, /v1/stats, /v1/tasks, /v1/task-groups/:id and /v1/events.

// APIHealth is /v1/health's answer.
type APIHealth struct {
	Status    string `json:"status"`
	Uptime    int64  `json:"uptime"` // seconds
	Version   string `json:"version"`
	TaskCount int    `json:"taskCount"`
	// ReadOnly: this server cannot cancel (asyncagents serve); the dashboard offers no cancel.
	ReadOnly bool `json:"readOnly,omitempty"`
	// Reason says why the status is "degraded" (config.APIConfig.Degraded): the task history
	// cannot be written.
	Reason string `json:"reason,omitempty"`
	// ConfigError is the invalid config that fails every launch; Status is then "degraded".
	ConfigError string `json:"configError,omitempty"`
}

func apiServeHealth(tasks []*task.Task, cfg config.APIConfig, now int64) Response {
	h := APIHealth{Status: "ok", Version: cfg.Version, TaskCount: len(tasks), ReadOnly: cfg.ReadOnly, ConfigError: cfg.ConfigError}
	if cfg.Degraded != "" {
		h.Status, h.Reason = "degraded", cfg.Degraded
	}
	if h.ConfigError != "" {
		h.Status = "degraded"
	}
	if h.Version == "" {
		h.Version = version.Version
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
	// Queued counts the running tasks still waiting for a slot (no session yet).
	Queued int `json:"queued,omitempty"`
	// Tokens and Cost sum every task's (absent while no task has any); View writes them.
	Tokens *task.Tokens  `json:"tokens,omitempty"`
	Cost   float64       `json:"cost,omitempty"`
	View   *APIUsageView `json:"view,omitempty"`
}

// APIUsageView is a sum of tokens and cost as a page shows it ("12.3k", "$0.25"), each "" while
// there is none, so the page formats neither.
type APIUsageView struct {
	Tokens string `json:"tokens,omitempty"`
	Cost   string `json:"cost,omitempty"`
}

// usageView is the view of a sum, nil when there is none.
func usageView(tokens *task.Tokens, cost float64) *APIUsageView {
	if tokens == nil && cost == 0 {
		return nil
	}
	v := &APIUsageView{}
	if tokens != nil {
		v.Tokens = text.Count(tokens.Total())
	}
	if cost != 0 {
		v.Cost = text.Cost(cost)
	}
	return v
}

// addUsage adds t's tokens and cost to a sum.
func addUsage(tokens **task.Tokens, cost *float64, t *task.Task) {
	if t.Tokens == nil && t.Cost == 0 {
		return
	}
	if *tokens == nil {
		*tokens = &task.Tokens{}
	}
	k, c := t.Usage()
	(*tokens).Add(k)
	*cost += c
}

// APIDurationStats are in milliseconds; all zero when Count is 0. Avg is rounded to the nearest ms.
type APIDurationStats struct {
	Avg   int64 `json:"avg"`
	Max   int64 `json:"max"`
	Min   int64 `json:"min"`
	Count int   `json:"count"`
}

func apiComputeStats(tasks []*task.Task, now int64) APIStats {
	s := APIStats{ByStatus: make(map[string]int, len(apiStatusNames)), ByAgent: map[string]int{}, TotalTasks: len(tasks)}
	for _, st := range apiStatusNames {
		s.ByStatus[string(st)] = 0
	}
	s.ByStatus[apiQueued] = 0
	var sum int64
	for i := range tasks {
		t := tasks[i]
		s.ByStatus[string(t.Shown())]++
		s.ByAgent[t.Agent]++
		history.Load(t) // the usage is past the head a restore reads
		addUsage(&s.Tokens, &s.Cost, t)
		if t.Queued && t.Status == task.StatusRunning {
			s.Queued++
		}
		if !t.Status.Terminal() {
			s.ActiveTasks++
			continue
		}
		d := history.Duration(t, now)
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
	s.View = usageView(s.Tokens, s.Cost)
	return s
}

// APITaskList is /v1/tasks's answer. Total counts every matching task, before pagination. The
// tasks come without their prompt and result ("" both), which can be megabytes each: one 2 MB
// result made a 2 MB list. The task's own answer (GET /v1/tasks/:id) and its frames have them.
type APITaskList struct {
	Tasks  []*task.Task `json:"tasks"`
	Total  int          `json:"total"`
	Limit  int          `json:"limit"`
	Offset int          `json:"offset"`
}

// apiListFilter is /v1/tasks's parsed query.
type apiListFilter struct {
	statuses []string // any of these labels (apiStatusLabel); none means all
	agent    string
	search   string // lower-cased
	ascii    bool   // search is ASCII, so it can be matched without allocating
	limit    int
	offset   int
	sort     string // one of APISortKeys; "" is startedAt
	asc      bool
}

func apiParseListQuery(q []apiQueryParam) (apiListFilter, string) {
	f := apiListFilter{limit: APIDefaultLimit}
	if v := apiQueryGet(q, "status"); v != "" {
		for _, name := range strings.Split(v, ",") {
			st := strings.TrimSpace(name)
			if st != apiQueued && !slices.Contains(apiStatusNames, task.Status(st)) {
				return f, fmt.Sprintf("invalid status %s: allowed values are %s, %s (or several, comma-separated)", apiEcho(v), apiJoinStatuses(), apiQueued)
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
	return f, apiParseSort(q, &f)
}

func (f *apiListFilter) match(t *task.Task) bool {
	if len(f.statuses) > 0 && !slices.Contains(f.statuses, apiStatusLabel(t)) {
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

// apiServeList filters, sorts (newest first unless asked otherwise) and marshals only the page.
func apiServeList(tasks []*task.Task, q []apiQueryParam, now int64) Response {
	f, bad := apiParseListQuery(q)
	if bad != "" {
		return apiFail(400, bad)
	}
	var page []int
	var total int
	if f.newestFirst() {
		page, total = apiPage(tasks, &f)
	} else {
		all := apiSortedBy(tasks, &f, now)
		total = len(all)
		if f.offset < total {
			page = all[f.offset : f.offset+min(f.limit, total-f.offset)]
		}
	}
	// Written as encoding/json writes APITaskList (TestAPITaskListEncodesAsTheStruct), with the
	// tasks' own encoder (appendTask).
	b := append(make([]byte, 0, 64+len(page)*1536), `{"tasks":[`...)
	for k, t := range apiOutAll(tasks, page, now) {
		if k > 0 {
			b = append(b, ',')
		}
		t.Prompt, t.Result = "", ""
		var err error
		if b, err = task.AppendJSON(b, t); err != nil {
			return apiFail(500, "internal error: encoding the response failed: "+err.Error())
		}
	}
	b = jsonw.KeyInt(append(b, ']'), "total", int64(total))
	b = jsonw.KeyInt(b, "limit", int64(f.limit))
	b = append(jsonw.KeyInt(b, "offset", int64(f.offset)), '}')
	// b is not written again: the body is made of it, not copied from it, unless most of it is
	// unused (the answer cache counts a body's length, and would keep the whole buffer).
	if cap(b) > 2*len(b) {
		return Response{Status: 200, Headers: apiJSONHeaders(), Body: string(b)}
	}
	return Response{Status: 200, Headers: apiJSONHeaders(), Body: unsafe.String(&b[0], len(b))}
}

// apiPage returns the indexes of the page [offset, offset+limit) of the tasks f matches,
// ordered as apiNewestFirst orders them, and how many tasks f matches. Tasks arrive in
// launch order, which is nearly always startedAt order: then one backward pass that allocates
// only the page does it all; otherwise it sorts.
func apiPage(tasks []*task.Task, f *apiListFilter) (page []int, total int) {
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
func apiNewestFirst(tasks []*task.Task, keep func(*task.Task) bool) []int {
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
	BatchID string `json:"batchId"`
	// Name is the batch as a user knows it (view.BatchName), for the dashboard.
	Name  string        `json:"name"`
	Tasks []*task.Task  `json:"tasks"`
	Stats APIGroupStats `json:"stats"`
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
	// Tokens and Cost sum the batch's tasks' (absent while none has any); View writes them.
	Tokens *task.Tokens  `json:"tokens,omitempty"`
	Cost   float64       `json:"cost,omitempty"`
	View   *APIUsageView `json:"view,omitempty"`
}

func apiServeGroup(tasks []*task.Task, batchID string, now int64) Response {
	g := APITaskGroup{BatchID: batchID}
	var first, last int64
	for i := range tasks {
		t := tasks[i]
		if t.BatchID != batchID {
			continue
		}
		g.Tasks = append(g.Tasks, apiOut(t, now)) // read whole (history.Load): the stats below read past the head
		s := &g.Stats
		switch t.Status {
		case task.StatusCompleted:
			s.Completed++
		case task.StatusError:
			s.Error++
		case task.StatusCancelled:
			s.Cancelled++
		default:
			s.Running++
		}
		s.TotalToolCalls += t.Progress.ToolCalls
		addUsage(&s.Tokens, &s.Cost, t)
		end := t.StartedAt + history.Duration(t, now)
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
	g.Name = view.BatchName(g.Tasks)
	g.Stats.CompletionRate = float64(g.Stats.Completed) / float64(g.Stats.Total)
	if last > first {
		g.Stats.Duration = last - first
	}
	g.Stats.View = usageView(g.Stats.Tokens, g.Stats.Cost)
	return apiJSON(g)
}

// apiServeEvents opens a stream. ?snapshot=stats opens it with the stats alone (tasks: []): a
// client that pages through the tasks itself, as the dashboard does, needs no copy of 10,000.
func apiServeEvents(req Request, tasks []*task.Task, q []apiQueryParam, cfg config.APIConfig, now int64) Response {
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
		body := SSEFrame(SSESnapshot, SSESnapshotData{Tasks: []*task.Task{}, Stats: apiComputeStats(tasks, now)})
		return Response{Status: 200, Headers: h, Body: body, Stream: true}
	}
	return Response{Status: 200, Headers: h, Body: Snapshot(tasks, now), Stream: true}
}
