package httpapi

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/internal/tasktest"
	"github.com/asyncagents/asyncagents/core/internal/version"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/core/view"
)

// get builds an authorised GET from a loopback host.
func apiGet(path, query string) Request {
	return Request{Method: "GET", Path: path, Query: query,
		Headers: map[string]string{"host": "127.0.0.1:5165", "authorization": "Bearer s3cret"}}
}

func apiWith(r Request, kv ...string) Request {
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

func TestHTTPRoutes(t *testing.T) {
	tasks := tasktest.Tasks()
	cases := []struct {
		name   string
		req    Request
		status int
		check  func(t *testing.T, r Response)
	}{
		{"health needs no token", apiWith(apiGet("/v1/health", ""), "authorization", ""), 200, func(t *testing.T, r Response) {
			require.JSONEq(t, `{"status":"ok","uptime":6,"version":"9.9.9","taskCount":5}`, r.Body)
		}},
		{"health with a wrong token still answers", apiWith(apiGet("/v1/health", ""), "authorization", "Bearer nope"), 200, nil},
		{"stats", apiGet("/v1/stats", ""), 200, func(t *testing.T, r Response) {
			require.JSONEq(t, `{"byStatus":{"running":1,"completed":1,"error":1,"cancelled":1,"resumed":1,"queued":0},
				"byAgent":{"explore":2,"general":2,"reviewer":1},
				"duration":{"avg":1833,"max":4000,"min":500,"count":3},"totalTasks":5,"activeTasks":2}`, r.Body)
		}},
		{"list", apiGet("/v1/tasks", ""), 200, func(t *testing.T, r Response) {
			m := tasktest.Decode(t, r.Body)
			require.EqualValues(t, 5, m["total"])
			require.EqualValues(t, 50, m["limit"])
			require.EqualValues(t, 0, m["offset"])
			require.Equal(t, []string{"ses_e", "ses_d", "ses_c", "ses_b", "ses_a"}, tasktest.ListIDs(t, r.Body))
		}},
		{"detail", apiGet("/v1/tasks/ses_c", ""), 200, func(t *testing.T, r Response) {
			want, _ := json.Marshal(publicOf(tasks[2]))
			require.JSONEq(t, string(want), r.Body)
		}},
		{"logs", apiGet("/v1/tasks/ses_b/logs", ""), 200, func(t *testing.T, r Response) {
			require.Equal(t, "ses_b", r.Logs)
			require.Empty(t, r.Body)
			require.Equal(t, "application/json; charset=utf-8", r.Headers["Content-Type"])
		}},
		{"logs of a finished task", apiGet("/v1/tasks/ses_a/logs", ""), 200, func(t *testing.T, r Response) {
			require.Equal(t, "ses_a", r.Logs)
		}},
		{"group", apiGet("/v1/task-groups/b1", ""), 200, func(t *testing.T, r Response) {
			var g APITaskGroup
			require.NoError(t, json.Unmarshal([]byte(r.Body), &g))
			require.Equal(t, "b1", g.BatchID)
			require.Len(t, g.Tasks, 2)
			require.Equal(t, "ses_a", g.Tasks[0].ID)
			require.Equal(t, g.Tasks[0].Description+", "+g.Tasks[1].Description, g.Name, "named by its tasks, not its ID")
			require.Equal(t, APIGroupStats{Completed: 1, Running: 1, Total: 2, CompletionRate: 0.5, TotalToolCalls: 5, Duration: 9000}, g.Stats)
		}},
		{"finished group", apiGet("/v1/task-groups/b2", ""), 200, func(t *testing.T, r Response) {
			var g APITaskGroup
			require.NoError(t, json.Unmarshal([]byte(r.Body), &g))
			require.Equal(t, APIGroupStats{Error: 1, Cancelled: 1, Total: 2, TotalToolCalls: 1, Duration: 1500}, g.Stats)
		}},
		{"events", apiGet("/v1/events", ""), 200, func(t *testing.T, r Response) {
			require.True(t, r.Stream)
			require.Equal(t, "text/event-stream", r.Headers["Content-Type"])
			require.Equal(t, "no-cache", r.Headers["Cache-Control"])
			require.Equal(t, SnapshotFrame(tasks, tasktest.Now), r.Body)
		}},
		{"events below the limit", func() Request {
			r := apiGet("/v1/events", "")
			r.Subscribers = APIDefaultMaxSubscribers - 1
			return r
		}(), 200, nil},
		{"events at the limit", func() Request { r := apiGet("/v1/events", ""); r.Subscribers = APIDefaultMaxSubscribers; return r }(), 503, func(t *testing.T, r Response) {
			require.False(t, r.Stream)
			require.Contains(t, tasktest.Decode(t, r.Body)["error"], "too many event streams")
		}},
		{"events with ?token=", apiWith(apiGet("/v1/events", "token=s3cret"), "authorization", ""), 200, nil},
		{"events with a bad ?token=", apiWith(apiGet("/v1/events", "token=s3cre"), "authorization", ""), 401, nil},
		{"query inside the path", apiGet("/v1/tasks?limit=1", ""), 200, func(t *testing.T, r Response) {
			require.Equal(t, []string{"ses_e"}, tasktest.ListIDs(t, r.Body))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ServeTasks(c.req, tasks, tasktest.APIConfig, tasktest.Now)
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
			r := ServeTasks(apiGet("/v1/tasks", c.query), tasktest.Tasks(), tasktest.APIConfig, tasktest.Now)
			require.Equal(t, 200, r.Status, r.Body)
			require.Equal(t, c.ids, tasktest.ListIDs(t, r.Body))
			require.EqualValues(t, c.total, tasktest.Decode(t, r.Body)["total"])
		})
	}
}

func TestHTTPListUnicodeSearch(t *testing.T) {
	tasks := []task.Task{{ID: "a", Description: "Überprüfe Grüße"}, {ID: "b", Description: "plain"}}
	r := ServeTasks(apiGet("/v1/tasks", "search=GRÜSSE"), tasks, tasktest.APIConfig, tasktest.Now)
	require.Equal(t, []string{}, tasktest.ListIDs(t, r.Body))
	r = ServeTasks(apiGet("/v1/tasks", "search=%C3%BCBERPR"), tasks, tasktest.APIConfig, tasktest.Now)
	require.Equal(t, []string{"a"}, tasktest.ListIDs(t, r.Body))
}

func TestHTTPListOrderWhenLaunchOrderIsNotStartOrder(t *testing.T) {
	tasks := []task.Task{{ID: "x", StartedAt: 300}, {ID: "y", StartedAt: 100}, {ID: "z", StartedAt: 300}, {ID: "w", StartedAt: 200}}
	r := ServeTasks(apiGet("/v1/tasks", ""), tasks, tasktest.APIConfig, tasktest.Now)
	require.Equal(t, []string{"z", "x", "w", "y"}, tasktest.ListIDs(t, r.Body))
	// Ties in start order: the later launch first, as in the sorted path.
	tasks = []task.Task{{ID: "p", StartedAt: 1}, {ID: "q", StartedAt: 1}, {ID: "r", StartedAt: 2}}
	r = ServeTasks(apiGet("/v1/tasks", ""), tasks, tasktest.APIConfig, tasktest.Now)
	require.Equal(t, []string{"r", "q", "p"}, tasktest.ListIDs(t, r.Body))
}

func TestHTTPListEmpty(t *testing.T) {
	r := ServeTasks(apiGet("/v1/tasks", ""), nil, tasktest.APIConfig, tasktest.Now)
	require.JSONEq(t, `{"tasks":[],"total":0,"limit":50,"offset":0}`, r.Body)
	r = ServeTasks(apiGet("/v1/stats", ""), nil, tasktest.APIConfig, tasktest.Now)
	require.JSONEq(t, `{"byStatus":{"running":0,"completed":0,"error":0,"cancelled":0,"resumed":0,"queued":0},"byAgent":{},
		"duration":{"avg":0,"max":0,"min":0,"count":0},"totalTasks":0,"activeTasks":0}`, r.Body)
}

func TestHTTPErrors(t *testing.T) {
	statusErr := "invalid status %q: allowed values are running, completed, error, cancelled, resumed, queued (or several, comma-separated)"
	limitErr := "invalid limit %q: must be an integer from 0 to 200 (default 50)"
	offsetErr := "invalid offset %q: must be an integer of 0 or more (default 0)"
	cases := []struct {
		name   string
		req    Request
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
		{"bad query escape", apiGet("/v1/tasks", "search=%G0"), 400, "malformed query string: a bad percent-encoding, or a ';' between parameters"},
		{"cut query escape", apiGet("/v1/tasks", "search=%4"), 400, "malformed query string: a bad percent-encoding, or a ';' between parameters"},
		{"semicolon in the query", apiGet("/v1/tasks", "status=running;limit=1"), 400, "malformed query string: a bad percent-encoding, or a ';' between parameters"},
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
		{"POST", func() Request { r := apiGet("/v1/tasks", ""); r.Method = "POST"; return r }(), 405,
			"method \"POST\" not allowed on \"/v1/tasks\": the API is read-only (GET, OPTIONS) but for POST /v1/tasks/:id/cancel, /v1/tasks/:id/permission, /v1/dashboard/code and /v1/dashboard/session"},
		{"HEAD", func() Request { r := apiGet("/v1/health", ""); r.Method = "HEAD"; return r }(), 405, "method \"HEAD\" not allowed…"},
		{"lower-case get", func() Request { r := apiGet("/v1/health", ""); r.Method = "get"; return r }(), 405, "method \"get\" not allowed…"},
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
		{"host before method", func() Request {
			r := apiWith(apiGet("/v1/tasks", ""), "host", "evil.example")
			r.Method = "PUT"
			return r
		}(), 403, "forbidden…"},
		{"missing host", apiWith(apiGet("/v1/health", ""), "host", ""), 403, "forbidden: missing Host header"},
		{"long host is cut", apiWith(apiGet("/v1/health", ""), "host", strings.Repeat("é", 80)), 403, `forbidden: Host "` + strings.Repeat("é", 50) + `…" is not…`},
		{"subscriber limit", func() Request { r := apiGet("/v1/events", ""); r.Subscribers = 128; return r }(), 503,
			"too many event streams: 128 open, the limit is 128; try again later"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ServeTasks(c.req, tasktest.Tasks(), tasktest.APIConfig, tasktest.Now)
			require.Equal(t, c.status, r.Status, "body: %s", r.Body)
			apiRequireCORS(t, r)
			require.Equal(t, "application/json; charset=utf-8", r.Headers["Content-Type"])
			require.False(t, r.Stream)
			require.Empty(t, r.Logs)
			got, _ := tasktest.Decode(t, r.Body)["error"].(string)
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
		r := ServeTasks(apiWith(apiGet("/v1/health", ""), "host", h), nil, tasktest.APIConfig, tasktest.Now)
		require.Equal(t, 200, r.Status, "host %q: %s", h, r.Body)
	}
	for _, h := range bad {
		req := apiGet("/v1/health", "")
		req.Headers["host"] = h
		r := ServeTasks(req, nil, tasktest.APIConfig, tasktest.Now)
		require.Equal(t, 403, r.Status, "host %q: %s", h, r.Body)
		// Every OPTIONS answers 204, but only from a loopback Host.
		req.Method = "OPTIONS"
		require.Equal(t, 403, ServeTasks(req, nil, tasktest.APIConfig, tasktest.Now).Status, "OPTIONS host %q", h)
	}
}

func TestHTTPHeaderNamesAnyCase(t *testing.T) {
	req := Request{Method: "GET", Path: "/v1/stats", Headers: map[string]string{"Host": "localhost", "Authorization": "Bearer s3cret"}}
	require.Equal(t, 200, ServeTasks(req, nil, tasktest.APIConfig, tasktest.Now).Status)
	req.Headers = nil
	require.Equal(t, 403, ServeTasks(req, nil, tasktest.APIConfig, tasktest.Now).Status)
}

func TestHTTPAuthModes(t *testing.T) {
	none := config.APIConfig{Auth: "none"}
	noAuth := apiWith(apiGet("/v1/tasks", ""), "authorization", "")
	require.Equal(t, 200, ServeTasks(noAuth, tasktest.Tasks(), none, tasktest.Now).Status)
	require.Equal(t, 200, ServeTasks(noAuth, tasktest.Tasks(), config.APIConfig{Auth: "NONE"}, tasktest.Now).Status)
	require.Equal(t, 200, ServeTasks(apiWith(noAuth, "authorization", "Bearer whatever"), tasktest.Tasks(), none, tasktest.Now).Status)
	require.Equal(t, 403, ServeTasks(apiWith(noAuth, "host", "evil.example"), tasktest.Tasks(), none, tasktest.Now).Status)

	// Any other mode means a token, and no configured token means nobody gets in.
	for _, cfg := range []config.APIConfig{{}, {Auth: "token"}, {Auth: "off"}, {Auth: "nonsense", Token: ""}} {
		r := ServeTasks(apiWith(apiGet("/v1/tasks", ""), "authorization", "Bearer "), tasktest.Tasks(), cfg, tasktest.Now)
		require.Equal(t, 401, r.Status)
		require.Equal(t, "unauthorized: the server has no API token configured", tasktest.Decode(t, r.Body)["error"])
		require.Equal(t, 200, ServeTasks(apiGet("/v1/health", ""), nil, cfg, tasktest.Now).Status)
	}
	require.Equal(t, 200, ServeTasks(apiGet("/v1/tasks", ""), tasktest.Tasks(), config.APIConfig{Auth: "token", Token: "s3cret"}, tasktest.Now).Status)
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
		req := Request{Method: "OPTIONS", Path: path, Headers: map[string]string{"host": "localhost:5165", "origin": "http://localhost:3000"}}
		r := ServeTasks(req, tasktest.Tasks(), tasktest.APIConfig, tasktest.Now)
		require.Equal(t, 204, r.Status)
		require.Empty(t, r.Body)
		apiRequireCORS(t, r)
		require.Equal(t, "600", r.Headers["Access-Control-Max-Age"])
		require.Empty(t, r.Headers["Content-Type"])
	}
}

func TestHTTPHealthUptime(t *testing.T) {
	h := func(cfg config.APIConfig, now int64) map[string]any {
		return tasktest.Decode(t, ServeTasks(apiGet("/v1/health", ""), nil, cfg, now).Body)
	}
	require.EqualValues(t, 0, h(config.APIConfig{}, 5000)["uptime"])
	require.EqualValues(t, 0, h(config.APIConfig{StartedAt: 6000}, 5000)["uptime"])
	require.EqualValues(t, 1, h(config.APIConfig{StartedAt: 1}, 1999)["uptime"])
	require.EqualValues(t, 3600, h(config.APIConfig{StartedAt: 1000}, 3_601_000)["uptime"])
	require.Equal(t, version.Version, h(config.APIConfig{}, 0)["version"])
}

func TestHTTPStatsDurations(t *testing.T) {
	tasks := []task.Task{
		{ID: "a", Agent: "x", Status: task.StatusCompleted, StartedAt: 0, CompletedAt: 1},
		{ID: "b", Agent: "x", Status: task.StatusCompleted, StartedAt: 0, CompletedAt: 2},
		{ID: "c", Agent: "", Status: task.StatusRunning, StartedAt: 0},
	}
	r := ServeTasks(apiGet("/v1/stats", ""), tasks, tasktest.APIConfig, tasktest.Now)
	require.JSONEq(t, `{"byStatus":{"running":1,"completed":2,"error":0,"cancelled":0,"resumed":0,"queued":0},"byAgent":{"x":2,"":1},
		"duration":{"avg":2,"max":2,"min":1,"count":2},"totalTasks":3,"activeTasks":1}`, r.Body) // 1.5 rounds to 2
}

func TestHTTPResponsesAreDeterministic(t *testing.T) {
	for _, path := range []string{"/v1/stats", "/v1/tasks", "/v1/events", "/v1/task-groups/b1"} {
		a := ServeTasks(apiGet(path, ""), tasktest.Tasks(), tasktest.APIConfig, tasktest.Now)
		for i := 0; i < 20; i++ {
			require.Equal(t, a, ServeTasks(apiGet(path, ""), tasktest.Tasks(), tasktest.APIConfig, tasktest.Now))
		}
	}
}

func TestHTTPDoesNotChangeTasks(t *testing.T) {
	tasks := tasktest.Tasks()
	before, _ := json.Marshal(tasks)
	for _, q := range []string{"", "status=running", "search=auth&limit=1&offset=1"} {
		ServeTasks(apiGet("/v1/tasks", q), tasks, tasktest.APIConfig, tasktest.Now)
	}
	ServeTasks(apiGet("/v1/events", ""), tasks, tasktest.APIConfig, tasktest.Now)
	after, _ := json.Marshal(tasks)
	require.Equal(t, string(before), string(after))
}

func TestHTTPErrorBodiesEscapeInput(t *testing.T) {
	r := ServeTasks(apiGet("/v1/tasks/<script>alert(1)</script>", ""), nil, tasktest.APIConfig, tasktest.Now)
	require.Equal(t, 404, r.Status)
	require.NotContains(t, r.Body, "<script>")
	require.True(t, json.Valid([]byte(r.Body)))
	r = ServeTasks(apiGet("/v1/tasks/\xff\xfe", ""), nil, tasktest.APIConfig, tasktest.Now)
	require.True(t, json.Valid([]byte(r.Body)))
}

func apiRequireCORS(t testing.TB, r Response) {
	t.Helper()
	require.Equal(t, "*", r.Headers["Access-Control-Allow-Origin"])
	require.Equal(t, "GET, OPTIONS", r.Headers["Access-Control-Allow-Methods"])
	require.Equal(t, "Content-Type, Authorization", r.Headers["Access-Control-Allow-Headers"])
	require.Equal(t, "nosniff", r.Headers["X-Content-Type-Options"])
}

// publicOf is the copy of t the machine hands out (core's run.public): lastTools an array, not
// null, and no slice shared.
func publicOf(t task.Task) task.Task {
	t.Progress.LastTools = append([]string{}, t.Progress.LastTools...)
	t.View = view.TaskOf(&t, 0) // its own tests: core/view/task_test.go
	return t
}
