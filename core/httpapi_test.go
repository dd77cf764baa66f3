package core

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/conformance"
)

// apiTasks is the fixture the Go tests share (the conformance files under conformance/http
// carry the same five tasks).
func apiTasks() []Task {
	return []Task{
		{ID: "ses_a", ParentSessionID: "ses_p", BatchID: "b1", Description: "Find auth code", Agent: "explore", Status: StatusCompleted,
			StartedAt: 1000, CompletedAt: 5000, Result: "found it", Progress: Progress{ToolCalls: 3, LastTools: []string{"read", "grep"}}},
		{ID: "ses_b", ParentSessionID: "ses_p", BatchID: "b1", Description: "Map the API routes", Agent: "explore", Status: StatusRunning,
			StartedAt: 2000, Progress: Progress{ToolCalls: 2, LastTools: []string{"glob"}}},
		{ID: "ses_c", ParentSessionID: "ses_p", BatchID: "b2", Description: "Fix AUTH bug", Agent: "general", Status: StatusError,
			StartedAt: 3000, CompletedAt: 4000, Error: &TaskError{Name: "ProviderError", Message: "rate limited"}, Progress: Progress{ToolCalls: 1}},
		{ID: "ses_d", ParentSessionID: "ses_p", BatchID: "b2", Description: "Write docs", Agent: "general", Status: StatusCancelled,
			StartedAt: 4000, CompletedAt: 4500, CancelReason: "not needed"},
		{ID: "ses_e", ParentSessionID: "ses_p", BatchID: "b3", Description: "Review auth flow", Agent: "reviewer", Status: StatusResumed,
			StartedAt: 5000, ResumeCount: 1, IsForked: true, Progress: Progress{ToolCalls: 4}},
	}
}

const apiNow = 10_000

var apiCfg = APIConfig{Token: "s3cret", StartedAt: 4000, Version: "9.9.9"}

// get builds an authorised GET from a loopback host.
func apiGet(path, query string) HTTPRequest {
	return HTTPRequest{Method: "GET", Path: path, Query: query,
		Headers: map[string]string{"host": "127.0.0.1:5165", "authorization": "Bearer s3cret"}}
}

func apiWith(r HTTPRequest, kv ...string) HTTPRequest {
	h := map[string]string{}
	for k, v := range r.Headers {
		h[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(h, kv[i])
		} else {
			h[kv[i]] = kv[i+1]
		}
	}
	r.Headers = h
	return r
}

func apiDecode(t testing.TB, body string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &m), "body: %s", body)
	return m
}

func apiListIDs(t testing.TB, body string) []string {
	t.Helper()
	var l struct {
		Tasks []Task `json:"tasks"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &l))
	ids := []string{}
	for _, x := range l.Tasks {
		ids = append(ids, x.ID)
	}
	return ids
}

func TestHTTPRoutes(t *testing.T) {
	tasks := apiTasks()
	cases := []struct {
		name   string
		req    HTTPRequest
		status int
		check  func(t *testing.T, r HTTPResponse)
	}{
		{"health needs no token", apiWith(apiGet("/v1/health", ""), "authorization", ""), 200, func(t *testing.T, r HTTPResponse) {
			require.JSONEq(t, `{"status":"ok","uptime":6,"version":"9.9.9","taskCount":5}`, r.Body)
		}},
		{"health with a wrong token still answers", apiWith(apiGet("/v1/health", ""), "authorization", "Bearer nope"), 200, nil},
		{"stats", apiGet("/v1/stats", ""), 200, func(t *testing.T, r HTTPResponse) {
			require.JSONEq(t, `{"byStatus":{"running":1,"completed":1,"error":1,"cancelled":1,"resumed":1},
				"byAgent":{"explore":2,"general":2,"reviewer":1},
				"duration":{"avg":1833,"max":4000,"min":500,"count":3},"totalTasks":5,"activeTasks":2}`, r.Body)
		}},
		{"list", apiGet("/v1/tasks", ""), 200, func(t *testing.T, r HTTPResponse) {
			m := apiDecode(t, r.Body)
			require.EqualValues(t, 5, m["total"])
			require.EqualValues(t, 50, m["limit"])
			require.EqualValues(t, 0, m["offset"])
			require.Equal(t, []string{"ses_e", "ses_d", "ses_c", "ses_b", "ses_a"}, apiListIDs(t, r.Body))
		}},
		{"detail", apiGet("/v1/tasks/ses_c", ""), 200, func(t *testing.T, r HTTPResponse) {
			want, _ := json.Marshal(tasks[2].public())
			require.JSONEq(t, string(want), r.Body)
		}},
		{"logs", apiGet("/v1/tasks/ses_b/logs", ""), 200, func(t *testing.T, r HTTPResponse) {
			require.Equal(t, "ses_b", r.Logs)
			require.Empty(t, r.Body)
			require.Equal(t, "application/json; charset=utf-8", r.Headers["Content-Type"])
		}},
		{"logs of a finished task", apiGet("/v1/tasks/ses_a/logs", ""), 200, func(t *testing.T, r HTTPResponse) {
			require.Equal(t, "ses_a", r.Logs)
		}},
		{"group", apiGet("/v1/task-groups/b1", ""), 200, func(t *testing.T, r HTTPResponse) {
			var g APITaskGroup
			require.NoError(t, json.Unmarshal([]byte(r.Body), &g))
			require.Equal(t, "b1", g.BatchID)
			require.Len(t, g.Tasks, 2)
			require.Equal(t, "ses_a", g.Tasks[0].ID)
			require.Equal(t, APIGroupStats{Completed: 1, Running: 1, Total: 2, CompletionRate: 0.5, TotalToolCalls: 5, Duration: 9000}, g.Stats)
		}},
		{"finished group", apiGet("/v1/task-groups/b2", ""), 200, func(t *testing.T, r HTTPResponse) {
			var g APITaskGroup
			require.NoError(t, json.Unmarshal([]byte(r.Body), &g))
			require.Equal(t, APIGroupStats{Error: 1, Cancelled: 1, Total: 2, TotalToolCalls: 1, Duration: 1500}, g.Stats)
		}},
		{"events", apiGet("/v1/events", ""), 200, func(t *testing.T, r HTTPResponse) {
			require.True(t, r.Stream)
			require.Equal(t, "text/event-stream", r.Headers["Content-Type"])
			require.Equal(t, "no-cache", r.Headers["Cache-Control"])
			require.Equal(t, SnapshotFrame(tasks, apiNow), r.Body)
		}},
		{"events below the limit", func() HTTPRequest {
			r := apiGet("/v1/events", "")
			r.Subscribers = APIDefaultMaxSubscribers - 1
			return r
		}(), 200, nil},
		{"events at the limit", func() HTTPRequest { r := apiGet("/v1/events", ""); r.Subscribers = APIDefaultMaxSubscribers; return r }(), 503, func(t *testing.T, r HTTPResponse) {
			require.False(t, r.Stream)
			require.Contains(t, apiDecode(t, r.Body)["error"], "too many event streams")
		}},
		{"events with ?token=", apiWith(apiGet("/v1/events", "token=s3cret"), "authorization", ""), 200, nil},
		{"events with a bad ?token=", apiWith(apiGet("/v1/events", "token=s3cre"), "authorization", ""), 401, nil},
		{"query inside the path", apiGet("/v1/tasks?limit=1", ""), 200, func(t *testing.T, r HTTPResponse) {
			require.Equal(t, []string{"ses_e"}, apiListIDs(t, r.Body))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ServeHTTP(c.req, tasks, apiCfg, apiNow)
			require.Equal(t, c.status, r.Status, "body: %s", r.Body)
			apiRequireCORS(t, r)
			if c.check != nil {
				c.check(t, r)
			}
		})
	}
}

func TestHTTPListFilters(t *testing.T) {
	cases := []struct {
		query string
		ids   []string
		total int
	}{
		{"status=running", []string{"ses_b"}, 1},
		{"status=completed", []string{"ses_a"}, 1},
		{"status=resumed,running", []string{"ses_e", "ses_b"}, 2},
		{"status=error,error", []string{"ses_c"}, 1},
		{"agent=explore", []string{"ses_b", "ses_a"}, 2},
		{"agent=Explore", []string{}, 0},
		{"agent=nobody", []string{}, 0},
		{"search=auth", []string{"ses_e", "ses_c", "ses_a"}, 3},
		{"search=AUTH", []string{"ses_e", "ses_c", "ses_a"}, 3},
		{"search=the+api%20ROUTES", []string{"ses_b"}, 1},
		{"search=zzz", []string{}, 0},
		{"search=auth&status=completed", []string{"ses_a"}, 1},
		{"search=auth&agent=general", []string{"ses_c"}, 1},
		{"limit=2", []string{"ses_e", "ses_d"}, 5},
		{"limit=2&offset=1", []string{"ses_d", "ses_c"}, 5},
		{"limit=10&offset=3", []string{"ses_b", "ses_a"}, 5},
		{"offset=5", []string{}, 5},
		{"offset=999999999", []string{}, 5},
		{"limit=0", []string{}, 5},
		{"limit=200", []string{"ses_e", "ses_d", "ses_c", "ses_b", "ses_a"}, 5},
		{"limit=007", []string{"ses_e", "ses_d", "ses_c", "ses_b", "ses_a"}, 5},
		{"status=&agent=&search=&limit=&offset=", []string{"ses_e", "ses_d", "ses_c", "ses_b", "ses_a"}, 5},
		{"limit=1&limit=3", []string{"ses_e"}, 5},
		{"unknown=1&&=&x", []string{"ses_e", "ses_d", "ses_c", "ses_b", "ses_a"}, 5},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			r := ServeHTTP(apiGet("/v1/tasks", c.query), apiTasks(), apiCfg, apiNow)
			require.Equal(t, 200, r.Status, r.Body)
			require.Equal(t, c.ids, apiListIDs(t, r.Body))
			require.EqualValues(t, c.total, apiDecode(t, r.Body)["total"])
		})
	}
}

func TestHTTPListUnicodeSearch(t *testing.T) {
	tasks := []Task{{ID: "a", Description: "Überprüfe Grüße"}, {ID: "b", Description: "plain"}}
	r := ServeHTTP(apiGet("/v1/tasks", "search=GRÜSSE"), tasks, apiCfg, apiNow)
	require.Equal(t, []string{}, apiListIDs(t, r.Body))
	r = ServeHTTP(apiGet("/v1/tasks", "search=%C3%BCBERPR"), tasks, apiCfg, apiNow)
	require.Equal(t, []string{"a"}, apiListIDs(t, r.Body))
}

func TestHTTPListOrderWhenLaunchOrderIsNotStartOrder(t *testing.T) {
	tasks := []Task{{ID: "x", StartedAt: 300}, {ID: "y", StartedAt: 100}, {ID: "z", StartedAt: 300}, {ID: "w", StartedAt: 200}}
	r := ServeHTTP(apiGet("/v1/tasks", ""), tasks, apiCfg, apiNow)
	require.Equal(t, []string{"z", "x", "w", "y"}, apiListIDs(t, r.Body))
	// Ties in start order: the later launch first, as in the sorted path.
	tasks = []Task{{ID: "p", StartedAt: 1}, {ID: "q", StartedAt: 1}, {ID: "r", StartedAt: 2}}
	r = ServeHTTP(apiGet("/v1/tasks", ""), tasks, apiCfg, apiNow)
	require.Equal(t, []string{"r", "q", "p"}, apiListIDs(t, r.Body))
}

func TestHTTPListEmpty(t *testing.T) {
	r := ServeHTTP(apiGet("/v1/tasks", ""), nil, apiCfg, apiNow)
	require.JSONEq(t, `{"tasks":[],"total":0,"limit":50,"offset":0}`, r.Body)
	r = ServeHTTP(apiGet("/v1/stats", ""), nil, apiCfg, apiNow)
	require.JSONEq(t, `{"byStatus":{"running":0,"completed":0,"error":0,"cancelled":0,"resumed":0},"byAgent":{},
		"duration":{"avg":0,"max":0,"min":0,"count":0},"totalTasks":0,"activeTasks":0}`, r.Body)
}

func TestHTTPErrors(t *testing.T) {
	statusErr := "invalid status %q: allowed values are running, completed, error, cancelled, resumed (or several, comma-separated)"
	limitErr := "invalid limit %q: must be an integer from 0 to 200 (default 50)"
	offsetErr := "invalid offset %q: must be an integer of 0 or more (default 0)"
	cases := []struct {
		name   string
		req    HTTPRequest
		status int
		err    string // the whole error text, or a prefix ending in "…"
	}{
		{"limit over max", apiGet("/v1/tasks", "limit=201"), 400, fmt.Sprintf(limitErr, "201")},
		{"limit negative", apiGet("/v1/tasks", "limit=-1"), 400, fmt.Sprintf(limitErr, "-1")},
		{"limit plus sign", apiGet("/v1/tasks", "limit=%2B5"), 400, fmt.Sprintf(limitErr, "+5")},
		{"limit text", apiGet("/v1/tasks", "limit=abc"), 400, fmt.Sprintf(limitErr, "abc")},
		{"limit huge", apiGet("/v1/tasks", "limit=99999999999999999999"), 400, fmt.Sprintf(limitErr, "99999999999999999999")},
		{"offset negative", apiGet("/v1/tasks", "offset=-1"), 400, fmt.Sprintf(offsetErr, "-1")},
		{"offset float", apiGet("/v1/tasks", "offset=1.5"), 400, fmt.Sprintf(offsetErr, "1.5")},
		{"offset huge", apiGet("/v1/tasks", "offset=1234567890"), 400, fmt.Sprintf(offsetErr, "1234567890")},
		{"status unknown", apiGet("/v1/tasks", "status=done"), 400, fmt.Sprintf(statusErr, "done")},
		{"status one bad in a list", apiGet("/v1/tasks", "status=running,nope"), 400, fmt.Sprintf(statusErr, "running,nope")},
		{"status case", apiGet("/v1/tasks", "status=Running"), 400, fmt.Sprintf(statusErr, "Running")},
		{"bad query escape", apiGet("/v1/tasks", "search=%G0"), 400, "malformed query string: bad percent-encoding"},
		{"cut query escape", apiGet("/v1/tasks", "search=%4"), 400, "malformed query string: bad percent-encoding"},
		{"bad path escape", apiGet("/v1/tasks/%", ""), 400, `malformed path "/v1/tasks/%": bad percent-encoding`},
		{"unknown task", apiGet("/v1/tasks/ses_nope", ""), 404, `task "ses_nope" not found`},
		{"unknown task logs", apiGet("/v1/tasks/ses_nope/logs", ""), 404, `task "ses_nope" not found`},
		{"unknown group", apiGet("/v1/task-groups/nope", ""), 404, `task group "nope" not found`},
		{"empty group id", apiGet("/v1/task-groups/", ""), 404, `not found: no route GET "/v1/task-groups/"…`},
		{"unknown route", apiGet("/v1/nope", ""), 404, `not found: no route GET "/v1/nope"…`},
		{"no route", apiGet("/v2", ""), 404, `not found: no route GET "/v2"…`},
		{"empty path", apiGet("", ""), 404, `not found: no route GET ""…`},
		{"relative path", apiGet("v1/tasks", ""), 404, `not found: no route GET "v1/tasks"…`},
		{"trailing slash", apiGet("/v1/tasks/", ""), 404, `not found…`},
		{"too deep", apiGet("/v1/tasks/ses_a/logs/x", ""), 404, `not found…`},
		{"other version", apiGet("/v2/health", ""), 404, `not found…`},
		{"POST", func() HTTPRequest { r := apiGet("/v1/tasks", ""); r.Method = "POST"; return r }(), 405,
			"method \"POST\" not allowed on \"/v1/tasks\": the API is read-only (GET, OPTIONS) but for POST /v1/tasks/:id/cancel"},
		{"HEAD", func() HTTPRequest { r := apiGet("/v1/health", ""); r.Method = "HEAD"; return r }(), 405, "method \"HEAD\" not allowed…"},
		{"lower-case get", func() HTTPRequest { r := apiGet("/v1/health", ""); r.Method = "get"; return r }(), 405, "method \"get\" not allowed…"},
		{"no token", apiWith(apiGet("/v1/tasks", ""), "authorization", ""), 401, "unauthorized: missing token (send Authorization: Bearer <token>)"},
		{"no token on events", apiWith(apiGet("/v1/events", ""), "authorization", ""), 401,
			"unauthorized: missing token (send Authorization: Bearer <token>, or ?token=<token> on /v1/events)"},
		{"empty bearer", apiWith(apiGet("/v1/tasks", ""), "authorization", "Bearer "), 401, "unauthorized: missing token…"},
		{"blank header", apiWith(apiGet("/v1/tasks", ""), "authorization", "   "), 401, "unauthorized: missing token…"},
		{"wrong token", apiWith(apiGet("/v1/tasks", ""), "authorization", "Bearer s3cret2"), 401, "unauthorized: invalid token"},
		{"prefix of token", apiWith(apiGet("/v1/tasks", ""), "authorization", "Bearer s3cre"), 401, "unauthorized: invalid token"},
		{"basic auth", apiWith(apiGet("/v1/tasks", ""), "authorization", "Basic czNjcmV0"), 401, `unauthorized: the Authorization header must be "Bearer <token>"`},
		{"token without scheme", apiWith(apiGet("/v1/tasks", ""), "authorization", "s3cret"), 401, "unauthorized: the Authorization header…"},
		{"query token off the stream", apiWith(apiGet("/v1/tasks", "token=s3cret"), "authorization", ""), 401, "unauthorized: missing token…"},
		{"auth before routing", apiWith(apiGet("/v1/nope", ""), "authorization", ""), 401, "unauthorized…"},
		{"auth before params", apiWith(apiGet("/v1/tasks", "limit=-1"), "authorization", ""), 401, "unauthorized…"},
		{"foreign host", apiWith(apiGet("/v1/tasks", ""), "host", "evil.example"), 403,
			`forbidden: Host "evil.example" is not a loopback address (use 127.0.0.1 or localhost)`},
		{"host before auth", apiWith(apiGet("/v1/tasks", ""), "host", "evil.example", "authorization", ""), 403, "forbidden…"},
		{"host before method", func() HTTPRequest {
			r := apiWith(apiGet("/v1/tasks", ""), "host", "evil.example")
			r.Method = "PUT"
			return r
		}(), 403, "forbidden…"},
		{"missing host", apiWith(apiGet("/v1/health", ""), "host", ""), 403, "forbidden: missing Host header"},
		{"long host is cut", apiWith(apiGet("/v1/health", ""), "host", strings.Repeat("é", 80)), 403, `forbidden: Host "` + strings.Repeat("é", 50) + `…" is not…`},
		{"subscriber limit", func() HTTPRequest { r := apiGet("/v1/events", ""); r.Subscribers = 128; return r }(), 503,
			"too many event streams: 128 open, the limit is 128; try again later"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ServeHTTP(c.req, apiTasks(), apiCfg, apiNow)
			require.Equal(t, c.status, r.Status, "body: %s", r.Body)
			apiRequireCORS(t, r)
			require.Equal(t, "application/json; charset=utf-8", r.Headers["Content-Type"])
			require.False(t, r.Stream)
			require.Empty(t, r.Logs)
			got, _ := apiDecode(t, r.Body)["error"].(string)
			if prefix, ok := strings.CutSuffix(c.err, "…"); ok {
				require.True(t, strings.HasPrefix(got, prefix), "error %q, want prefix %q", got, prefix)
			} else {
				require.Equal(t, c.err, got)
			}
			switch c.status {
			case 401:
				require.Equal(t, `Bearer realm="asyncagents"`, r.Headers["WWW-Authenticate"])
			case 405:
				require.Equal(t, "GET, OPTIONS", r.Headers["Allow"])
			}
		})
	}
}

func TestHTTPHostCheck(t *testing.T) {
	ok := []string{"127.0.0.1", "127.0.0.1:5165", "localhost", "localhost:5165", "LocalHost:1", "[::1]", "[::1]:5165", "::1",
		"127.255.255.255", "127.0.0.2:80", "127.1.2.3:65535"}
	bad := []string{"evil.example", "evil.example:5165", "localhost.evil.example", "evil.localhost", "127.0.0.1.evil.example",
		"128.0.0.1", "0.0.0.0", "10.0.0.1:5165", "127.0.0.256", "127.0.0", "127.0.0.1.1", "0177.0.0.1", "127.00.0.1", "127.0.0.01",
		"127.1", "2130706433", "localhost:", "localhost:0", "localhost:65536", "localhost:123456", "localhost:80:80", "localhost:abc",
		"[::1", "[::1]x", "[::1]:", "[::2]", "[::ffff:127.0.0.1]", "::1:5165", "[0:0:0:0:0:0:0:1]", " localhost", "localhost ",
		"localhost.", "127.0.0.1:+80", "127.0.0.-1", "127.0.0.1a", ""}
	for _, h := range ok {
		r := ServeHTTP(apiWith(apiGet("/v1/health", ""), "host", h), nil, apiCfg, apiNow)
		require.Equal(t, 200, r.Status, "host %q: %s", h, r.Body)
	}
	for _, h := range bad {
		req := apiGet("/v1/health", "")
		req.Headers["host"] = h
		r := ServeHTTP(req, nil, apiCfg, apiNow)
		require.Equal(t, 403, r.Status, "host %q: %s", h, r.Body)
		// Every OPTIONS answers 204, but only from a loopback Host.
		req.Method = "OPTIONS"
		require.Equal(t, 403, ServeHTTP(req, nil, apiCfg, apiNow).Status, "OPTIONS host %q", h)
	}
}

func TestHTTPHeaderNamesAnyCase(t *testing.T) {
	req := HTTPRequest{Method: "GET", Path: "/v1/stats", Headers: map[string]string{"Host": "localhost", "Authorization": "Bearer s3cret"}}
	require.Equal(t, 200, ServeHTTP(req, nil, apiCfg, apiNow).Status)
	req.Headers = nil
	require.Equal(t, 403, ServeHTTP(req, nil, apiCfg, apiNow).Status)
}

func TestHTTPAuthModes(t *testing.T) {
	none := APIConfig{Auth: "none"}
	noAuth := apiWith(apiGet("/v1/tasks", ""), "authorization", "")
	require.Equal(t, 200, ServeHTTP(noAuth, apiTasks(), none, apiNow).Status)
	require.Equal(t, 200, ServeHTTP(noAuth, apiTasks(), APIConfig{Auth: "NONE"}, apiNow).Status)
	require.Equal(t, 200, ServeHTTP(apiWith(noAuth, "authorization", "Bearer whatever"), apiTasks(), none, apiNow).Status)
	require.Equal(t, 403, ServeHTTP(apiWith(noAuth, "host", "evil.example"), apiTasks(), none, apiNow).Status)

	// Any other mode means a token, and no configured token means nobody gets in.
	for _, cfg := range []APIConfig{{}, {Auth: "token"}, {Auth: "off"}, {Auth: "nonsense", Token: ""}} {
		r := ServeHTTP(apiWith(apiGet("/v1/tasks", ""), "authorization", "Bearer "), apiTasks(), cfg, apiNow)
		require.Equal(t, 401, r.Status)
		require.Equal(t, "unauthorized: the server has no API token configured", apiDecode(t, r.Body)["error"])
		require.Equal(t, 200, ServeHTTP(apiGet("/v1/health", ""), nil, cfg, apiNow).Status)
	}
	require.Equal(t, 200, ServeHTTP(apiGet("/v1/tasks", ""), apiTasks(), APIConfig{Auth: "token", Token: "s3cret"}, apiNow).Status)
}

func TestHTTPTokenEqual(t *testing.T) {
	require.True(t, apiTokenEqual("abc", "abc"))
	require.False(t, apiTokenEqual("abd", "abc"))
	require.False(t, apiTokenEqual("ab", "abc"))
	require.False(t, apiTokenEqual("abcd", "abc"))
	require.False(t, apiTokenEqual("", "abc"))
	require.False(t, apiTokenEqual("abc\x00", "abc"))
}

func TestHTTPOptions(t *testing.T) {
	for _, path := range []string{"/v1/tasks", "/v1/health", "/v1/events", "/nowhere", ""} {
		req := HTTPRequest{Method: "OPTIONS", Path: path, Headers: map[string]string{"host": "localhost:5165", "origin": "http://localhost:3000"}}
		r := ServeHTTP(req, apiTasks(), apiCfg, apiNow)
		require.Equal(t, 204, r.Status)
		require.Empty(t, r.Body)
		apiRequireCORS(t, r)
		require.Equal(t, "600", r.Headers["Access-Control-Max-Age"])
		require.Empty(t, r.Headers["Content-Type"])
	}
}

func TestHTTPHealthUptime(t *testing.T) {
	h := func(cfg APIConfig, now int64) map[string]any {
		return apiDecode(t, ServeHTTP(apiGet("/v1/health", ""), nil, cfg, now).Body)
	}
	require.EqualValues(t, 0, h(APIConfig{}, 5000)["uptime"])
	require.EqualValues(t, 0, h(APIConfig{StartedAt: 6000}, 5000)["uptime"])
	require.EqualValues(t, 1, h(APIConfig{StartedAt: 1}, 1999)["uptime"])
	require.EqualValues(t, 3600, h(APIConfig{StartedAt: 1000}, 3_601_000)["uptime"])
	require.Equal(t, Version, h(APIConfig{}, 0)["version"])
}

func TestHTTPStatsDurations(t *testing.T) {
	tasks := []Task{
		{ID: "a", Agent: "x", Status: StatusCompleted, StartedAt: 0, CompletedAt: 1},
		{ID: "b", Agent: "x", Status: StatusCompleted, StartedAt: 0, CompletedAt: 2},
		{ID: "c", Agent: "", Status: StatusRunning, StartedAt: 0},
	}
	r := ServeHTTP(apiGet("/v1/stats", ""), tasks, apiCfg, apiNow)
	require.JSONEq(t, `{"byStatus":{"running":1,"completed":2,"error":0,"cancelled":0,"resumed":0},"byAgent":{"x":2,"":1},
		"duration":{"avg":2,"max":2,"min":1,"count":2},"totalTasks":3,"activeTasks":1}`, r.Body) // 1.5 rounds to 2
}

func TestHTTPResponsesAreDeterministic(t *testing.T) {
	for _, path := range []string{"/v1/stats", "/v1/tasks", "/v1/events", "/v1/task-groups/b1"} {
		a := ServeHTTP(apiGet(path, ""), apiTasks(), apiCfg, apiNow)
		for i := 0; i < 20; i++ {
			require.Equal(t, a, ServeHTTP(apiGet(path, ""), apiTasks(), apiCfg, apiNow))
		}
	}
}

func TestHTTPDoesNotChangeTasks(t *testing.T) {
	tasks := apiTasks()
	before, _ := json.Marshal(tasks)
	for _, q := range []string{"", "status=running", "search=auth&limit=1&offset=1"} {
		ServeHTTP(apiGet("/v1/tasks", q), tasks, apiCfg, apiNow)
	}
	ServeHTTP(apiGet("/v1/events", ""), tasks, apiCfg, apiNow)
	after, _ := json.Marshal(tasks)
	require.Equal(t, string(before), string(after))
}

func TestHTTPErrorBodiesEscapeInput(t *testing.T) {
	r := ServeHTTP(apiGet("/v1/tasks/<script>alert(1)</script>", ""), nil, apiCfg, apiNow)
	require.Equal(t, 404, r.Status)
	require.NotContains(t, r.Body, "<script>")
	require.True(t, json.Valid([]byte(r.Body)))
	r = ServeHTTP(apiGet("/v1/tasks/\xff\xfe", ""), nil, apiCfg, apiNow)
	require.True(t, json.Valid([]byte(r.Body)))
}

func apiRequireCORS(t testing.TB, r HTTPResponse) {
	t.Helper()
	require.Equal(t, "*", r.Headers["Access-Control-Allow-Origin"])
	require.Equal(t, "GET, OPTIONS", r.Headers["Access-Control-Allow-Methods"])
	require.Equal(t, "Content-Type, Authorization", r.Headers["Access-Control-Allow-Headers"])
	require.Equal(t, "nosniff", r.Headers["X-Content-Type-Options"])
}

// --- SSE ---

func TestSSEFrame(t *testing.T) {
	require.Equal(t, "event: x\ndata: {\"a\":\"line\\nbreak\"}\n\n", SSEFrame("x", map[string]string{"a": "line\nbreak"}))
	require.Equal(t, "event: x\ndata: null\n\n", SSEFrame("x", nil))
	require.Equal(t, "event: xy\ndata: 1\n\n", SSEFrame("x\r\ny", 1))
	// Raw JSON with line breaks comes out compacted on one line.
	require.Equal(t, "event: x\ndata: {\"a\":1}\n\n", SSEFrame("x", json.RawMessage("{\n  \"a\": 1\n}")))
	// What cannot be marshalled becomes an error object, not a broken frame.
	f := SSEFrame("x", func() {})
	require.True(t, strings.HasPrefix(f, "event: x\ndata: {\"error\":\"encoding the event failed: "), f)
	require.True(t, strings.HasSuffix(f, "}\n\n"))
}

// parseSSE reads frames back as a client would.
func apiParseSSE(t testing.TB, s string) (events []string, data []string) {
	t.Helper()
	require.True(t, strings.HasSuffix(s, "\n\n"), "frame must end with a blank line: %q", s)
	for _, block := range strings.Split(strings.TrimSuffix(s, "\n\n"), "\n\n") {
		var ev string
		var lines []string
		for _, line := range strings.Split(block, "\n") {
			switch {
			case strings.HasPrefix(line, "event: "):
				ev = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				lines = append(lines, strings.TrimPrefix(line, "data: "))
			default:
				t.Fatalf("unexpected SSE line %q", line)
			}
		}
		require.Len(t, lines, 1, "one data line per frame")
		events = append(events, ev)
		data = append(data, lines[0])
	}
	return events, data
}

func TestSSESnapshotFrame(t *testing.T) {
	tasks := apiTasks()
	ev, data := apiParseSSE(t, SnapshotFrame(tasks, apiNow))
	require.Equal(t, []string{"snapshot"}, ev)
	var snap struct {
		Tasks []Task   `json:"tasks"`
		Stats APIStats `json:"stats"`
	}
	require.NoError(t, json.Unmarshal([]byte(data[0]), &snap))
	require.Len(t, snap.Tasks, 5)
	require.Equal(t, "ses_e", snap.Tasks[0].ID)
	require.Equal(t, apiComputeStats(apiPtrs(tasks), apiNow), snap.Stats)

	_, data = apiParseSSE(t, SnapshotFrame(nil, apiNow))
	require.JSONEq(t, `{"tasks":[],"stats":{"byStatus":{"running":0,"completed":0,"error":0,"cancelled":0,"resumed":0},"byAgent":{},
		"duration":{"avg":0,"max":0,"min":0,"count":0},"totalTasks":0,"activeTasks":0}}`, data[0])
}

func TestSSETaskEventName(t *testing.T) {
	cases := []struct {
		prev, next Status
		created    bool
		want       string
	}{
		{"", StatusRunning, true, "task.created"},
		{"", StatusError, true, "task.created"},
		{StatusRunning, StatusRunning, false, "task.updated"},
		{StatusRunning, StatusCompleted, false, "task.completed"},
		{StatusRunning, StatusError, false, "task.error"},
		{StatusRunning, StatusCancelled, false, "task.cancelled"},
		{StatusResumed, StatusCompleted, false, "task.completed"},
		{StatusResumed, StatusError, false, "task.error"},
		{StatusCompleted, StatusResumed, false, "task.updated"},
		{StatusCompleted, StatusCompleted, false, "task.updated"}, // e.g. the result was retrieved
		{StatusError, StatusError, false, "task.updated"},
		{StatusCancelled, StatusCancelled, false, "task.updated"},
	}
	for _, c := range cases {
		require.Equal(t, c.want, TaskEventName(c.prev, c.next, c.created), "%s -> %s created=%v", c.prev, c.next, c.created)
	}
}

func TestSSETaskFrame(t *testing.T) {
	task := apiTasks()[2]
	ev, data := apiParseSSE(t, TaskFrame(StatusRunning, false, task))
	require.Equal(t, []string{"task.error"}, ev)
	want, _ := json.Marshal(task.public())
	require.JSONEq(t, string(want), data[0])
	require.Contains(t, data[0], `"error":{"name":"ProviderError","message":"rate limited"}`)
}

func TestSSEHeartbeatFrame(t *testing.T) {
	require.Equal(t, "event: heartbeat\ndata: {\"ts\":\"2024-01-02T03:04:05.678Z\"}\n\n", HeartbeatFrame(1704164645678))
	require.Equal(t, "event: heartbeat\ndata: {\"ts\":\"1970-01-01T00:00:00.000Z\"}\n\n", HeartbeatFrame(0))
}

// --- conformance files ---

// httpCaseFile is a file under conformance/http: tasks, config and time, then requests played
// against ServeHTTP, each with the response it must give. expect is matched as a subset of the
// response's JSON (conformance.Match: objects key by key, arrays whole, "$contains", "$absent");
// bodyJSON, when given, is matched against the body parsed as JSON.
type httpCaseFile struct {
	Name   string          `json:"name"`
	Tasks  []Task          `json:"tasks"`
	Config APIConfig       `json:"config"`
	Now    int64           `json:"now"`
	Cases  []httpCaseEntry `json:"cases"`
}

type httpCaseEntry struct {
	Note    string          `json:"note"`
	Request HTTPRequest     `json:"request"`
	Expect  json.RawMessage `json:"expect"`
}

func TestHTTPConformance(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("conformance", "http", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	sort.Strings(files)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			require.NoError(t, err)
			dec := json.NewDecoder(strings.NewReader(string(raw)))
			dec.DisallowUnknownFields()
			var f httpCaseFile
			require.NoError(t, dec.Decode(&f))
			require.NotEmpty(t, f.Cases)
			// A machine over the file's tasks, as the hosts run it: a cancel changes it for the
			// cases after.
			var history strings.Builder
			for _, task := range f.Tasks {
				history.WriteString(HistoryLine(task))
			}
			m := NewMachine(Config{API: f.Config, MaxConcurrentStarts: 1000})
			res, _ := m.Restore(f.Now, history.String())
			require.Equal(t, len(f.Tasks), res.Restored)
			for i, c := range f.Cases {
				resp, _ := m.ServeHTTPEffects(PortInHeaders(c.Request, c.Request.Port), f.Config, f.Now)
				expect := strings.ReplaceAll(string(c.Expect), "{port}", strconv.Itoa(c.Request.Port))
				require.NoError(t, apiMatchHTTP(json.RawMessage(expect), resp), "case %d (%s)", i, c.Note)
			}
		})
	}
}

// matchHTTP checks resp against an expect object of conformance/http.
func apiMatchHTTP(expect json.RawMessage, resp HTTPResponse) error {
	var want map[string]any
	if err := json.Unmarshal(expect, &want); err != nil {
		return fmt.Errorf("bad expect: %w", err)
	}
	b, _ := json.Marshal(resp)
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		return err
	}
	if bodyWant, ok := want["bodyJSON"]; ok {
		delete(want, "bodyJSON")
		var body any
		if err := json.Unmarshal([]byte(resp.Body), &body); err != nil {
			return fmt.Errorf("body is not JSON: %q", resp.Body)
		}
		if err := conformance.Match(bodyWant, body, "body"); err != nil {
			return fmt.Errorf("%w\nbody: %s", err, resp.Body)
		}
	}
	if err := conformance.Match(want, got, "response"); err != nil {
		return fmt.Errorf("%w\nresponse: %s", err, b)
	}
	return nil
}

// --- benchmark ---

func apiManyTasks(n int) []Task {
	agents := []string{"explore", "general", "build", "reviewer"}
	statuses := []Status{StatusCompleted, StatusCompleted, StatusCompleted, StatusError, StatusCancelled, StatusRunning, StatusResumed}
	tasks := make([]Task, n)
	for i := range tasks {
		st := statuses[i%len(statuses)]
		t := Task{
			ID: fmt.Sprintf("ses_%08d", i), SessionID: fmt.Sprintf("ses_%08d", i), ParentSessionID: "ses_parent", ParentMessageID: fmt.Sprintf("msg_%d", i/4),
			BatchID: fmt.Sprintf("batch_%d", i/4), Description: fmt.Sprintf("Investigate module %d of the auth service", i),
			Prompt: strings.Repeat("Look at the code and report what you find. ", 6), Agent: agents[i%len(agents)],
			Status: st, StartedAt: int64(1_700_000_000_000 + i*1000), Depth: 1,
			Progress: Progress{ToolCalls: i % 37, LastTools: []string{"read", "grep", "glob"}, LastUpdate: int64(1_700_000_000_000 + i*1000 + 500)},
		}
		if st.Terminal() {
			t.CompletedAt = t.StartedAt + int64(1000+i%5000)
			t.Result = strings.Repeat("result text ", 20)
		}
		if st == StatusError {
			t.Error = &TaskError{Name: "ProviderError", Message: "rate limited"}
		}
		tasks[i] = t
	}
	return tasks
}

// BenchmarkListTasks10k is GET /v1/tasks over 10,000 tasks: the default page, and a filtered,
// searched, offset page.
func BenchmarkListTasks10k(b *testing.B) {
	tasks := apiManyTasks(10_000)
	now := int64(1_700_000_000_000 + 10_000*1000)
	for _, q := range []string{"", "limit=200", "status=completed&search=AUTH+service&limit=20&offset=100", "agent=explore&search=module+99"} {
		b.Run("q="+q, func(b *testing.B) {
			req := apiGet("/v1/tasks", q)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				r := ServeHTTP(req, tasks, apiCfg, now)
				if r.Status != 200 {
					b.Fatal(r.Body)
				}
			}
		})
	}
}

// BenchmarkStatsAndSnapshot10k prices the whole-store answers: /v1/stats and an SSE snapshot.
func BenchmarkStatsAndSnapshot10k(b *testing.B) {
	tasks := apiManyTasks(10_000)
	now := int64(1_700_000_000_000 + 10_000*1000)
	b.Run("stats", func(b *testing.B) {
		req := apiGet("/v1/stats", "")
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			ServeHTTP(req, tasks, apiCfg, now)
		}
	})
	b.Run("snapshot", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			SnapshotFrame(tasks, now)
		}
	})
}

func TestHTTPListPagesOutOfStartOrder(t *testing.T) {
	// Launch order is not start order (the sorting path): pages still cut the sorted list.
	var tasks []Task
	for i := 0; i < 30; i++ {
		tasks = append(tasks, Task{ID: fmt.Sprintf("t%02d", i), StartedAt: int64((i * 7) % 30), Agent: []string{"a", "b"}[i%2]})
	}
	all := apiListIDs(t, ServeHTTP(apiGet("/v1/tasks", ""), tasks, apiCfg, apiNow).Body)
	require.Len(t, all, 30)
	for i := 1; i < len(all); i++ {
		var a, b int
		fmt.Sscanf(all[i-1], "t%d", &a)
		fmt.Sscanf(all[i], "t%d", &b)
		require.Greater(t, (a*7)%30, (b*7)%30)
	}
	for _, c := range []struct{ offset, limit int }{{0, 5}, {5, 5}, {25, 10}, {29, 1}, {30, 1}, {31, 50}, {3, 0}} {
		r := ServeHTTP(apiGet("/v1/tasks", fmt.Sprintf("offset=%d&limit=%d", c.offset, c.limit)), tasks, apiCfg, apiNow)
		want := all[min(c.offset, 30):min(c.offset+c.limit, 30)]
		require.Equal(t, want, apiListIDs(t, r.Body), "offset %d limit %d", c.offset, c.limit)
		require.EqualValues(t, 30, apiDecode(t, r.Body)["total"])
	}
	r := ServeHTTP(apiGet("/v1/tasks", "agent=b&limit=3&offset=2"), tasks, apiCfg, apiNow)
	require.EqualValues(t, 15, apiDecode(t, r.Body)["total"])
	require.Len(t, apiListIDs(t, r.Body), 3)
}

// TestHTTPListPagesMatchSortedPath: the backward pass and the sort give the same pages.
func TestHTTPListPagesMatchSortedPath(t *testing.T) {
	tasks := apiManyTasks(500)
	for i := range tasks {
		tasks[i].StartedAt = int64(i / 3) // ties in threes
	}
	for _, q := range []string{"", "limit=7&offset=11", "status=completed&limit=200", "search=module+1&offset=3&limit=4", "offset=499", "offset=500"} {
		f, bad := apiParseListQuery(func() []apiQueryParam { p, _ := apiParseQuery(q); return p }())
		require.Empty(t, bad)
		fast, total := apiPage(apiPtrs(tasks), &f)
		all := apiNewestFirst(apiPtrs(tasks), f.match)
		require.Equal(t, len(all), total, q)
		want := all[min(f.offset, len(all)):min(f.offset+f.limit, len(all))]
		require.Equal(t, append([]int{}, want...), append([]int{}, fast...), q)
	}
}

// apiMachineWith returns a machine holding tasks, in that launch order.
func apiMachineWith(tasks []Task) *Machine {
	m := NewMachine(Config{})
	for _, t := range tasks {
		t := t
		m.tasks[t.ID] = &t
		m.order = append(m.order, t.ID)
	}
	return m
}

func TestHTTPMachineServesItsOwnTasks(t *testing.T) {
	tasks := apiTasks()
	for i := range tasks {
		tasks[i].Progress.LastTools = nil
	}
	m := apiMachineWith(tasks)
	m.order = append(m.order, "ses_forgotten") // an ID whose task is gone
	for _, path := range []string{"/v1/tasks", "/v1/stats", "/v1/tasks/ses_c", "/v1/task-groups/b1", "/v1/events", "/v1/health"} {
		require.Equal(t, ServeHTTP(apiGet(path, ""), tasks, apiCfg, apiNow), m.ServeHTTP(apiGet(path, ""), apiCfg, apiNow), path)
	}
	require.Equal(t, SnapshotFrame(tasks, apiNow), m.SnapshotFrame(apiNow))
	for _, tk := range m.tasks {
		require.Nil(t, tk.Progress.LastTools, "the machine's tasks are not changed")
	}
	// Everything the API shows has lastTools as an array, like Machine.Tasks.
	require.NotContains(t, m.ServeHTTP(apiGet("/v1/tasks", ""), apiCfg, apiNow).Body, `"lastTools":null`)
	require.NotContains(t, m.ServeHTTP(apiGet("/v1/task-groups/b2", ""), apiCfg, apiNow).Body, `"lastTools":null`)
	require.NotContains(t, m.ServeHTTP(apiGet("/v1/tasks/ses_d", ""), apiCfg, apiNow).Body, `"lastTools":null`)
	require.NotContains(t, m.SnapshotFrame(apiNow), `"lastTools":null`)
	require.NotContains(t, TaskFrame(StatusRunning, false, *m.tasks["ses_d"]), `"lastTools":null`)
}

// BenchmarkListTasks10kViaMachine is GET /v1/tasks as the envelope would run it: from the
// machine's tasks without copying them (Machine.ServeHTTP), and through Machine.Tasks (which
// copies every task: slower than the request itself).
func BenchmarkListTasks10kViaMachine(b *testing.B) {
	m := apiMachineWith(apiManyTasks(10_000))
	req := apiGet("/v1/tasks", "")
	b.Run("view", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if r := m.ServeHTTP(req, apiCfg, 1); r.Status != 200 {
				b.Fatal(r.Body)
			}
		}
	})
	b.Run("copy", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if r := ServeHTTP(req, m.Tasks(), apiCfg, 1); r.Status != 200 {
				b.Fatal(r.Body)
			}
		}
	})
}
