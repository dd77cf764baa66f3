package httpapi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/internal/tasktest"
)

// FuzzServeHTTP: whatever the method, path, query and headers, ServeTasks answers (no panic, no
// 500) with a status it is meant to give, the CORS headers while a token is required (none
// without), and a JSON object body unless it opens a stream, answers a preflight, hands the logs
// or the dashboard's page to the host, or redirects to the page.
func FuzzServeHTTP(f *testing.F) {
	seeds := []struct {
		method, path, query, host, auth string
		subscribers                     int
	}{
		{"GET", "/v1/health", "", "127.0.0.1:5165", "", 0},
		{"GET", "/v1/tasks", "status=running&limit=10&offset=2&search=auth", "localhost", "Bearer s3cret", 0},
		{"GET", "/v1/tasks", "limit=-1", "localhost", "Bearer s3cret", 0},
		{"GET", "/v1/tasks/ses_a", "", "[::1]:80", "Bearer s3cret", 0},
		{"GET", "/v1/tasks/ses_b/logs", "", "127.0.0.1", "Bearer s3cret", 0},
		{"GET", "/v1/task-groups/b1", "", "127.0.0.1", "Bearer s3cret", 0},
		{"GET", "/v1/events", "token=s3cret", "127.0.0.1", "", 3},
		{"GET", "/v1/events", "", "127.0.0.1", "Bearer s3cret", 64},
		{"OPTIONS", "/anything", "", "localhost", "", 0},
		{"POST", "/v1/tasks", "", "localhost", "Bearer s3cret", 0},
		{"GET", "/v1/tasks/%zz", "search=%", "evil.example", "Basic x", -1},
		{"GET", "/v1/stats?limit=3", "", "127.0.0.1", "bearer s3cret", 0},
		{"GET", "/", "", "127.0.0.1:5165", "", 0},
		{"GET", "/", "token=s3cret", "127.0.0.1:5165", "", 0},
		{"POST", "/v1/tasks/ses_b/cancel", "", "127.0.0.1:5165", "Bearer s3cret", 0},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.query, s.host, s.auth, s.subscribers, false)
	}
	f.Add("GET", "/v1/tasks", "", "localhost", "", 0, true)
	tasks := tasktest.Tasks()
	allowed := map[int]bool{200: true, 204: true, 303: true, 400: true, 401: true, 403: true, 404: true, 405: true, 409: true, 503: true}
	f.Fuzz(func(t *testing.T, method, path, query, host, auth string, subscribers int, authNone bool) {
		headers := map[string]string{"host": host, "origin": "http://localhost:3000"}
		if auth != "" {
			headers["authorization"] = auth
		}
		cfg := tasktest.APIConfig
		if authNone {
			cfg.Auth = "none"
		}
		req := Request{Method: method, Path: path, Query: query, Headers: headers, Subscribers: subscribers}
		r := ServeTasks(req, tasks, cfg, tasktest.Now)
		if !allowed[r.Status] {
			t.Fatalf("status %d for %+v: %s", r.Status, req, r.Body)
		}
		page := r.Asset != "" || r.Status == 303
		if !authNone && !page && (r.Headers["Access-Control-Allow-Origin"] != "*" || r.Headers["Access-Control-Allow-Methods"] != "GET, OPTIONS") {
			t.Fatalf("missing CORS headers for %+v: %v", req, r.Headers)
		}
		if _, granted := r.Headers["Access-Control-Allow-Origin"]; (authNone || page) && granted {
			t.Fatalf("a CORS grant without a token, or on the page, for %+v: %v", req, r.Headers)
		}
		switch {
		case page:
			if r.Body != "" || r.Status == 200 && r.Asset != DashboardAsset || r.Status == 303 && r.Headers["Location"] != "/" {
				t.Fatalf("bad page answer for %+v: %+v", req, r)
			}
		case r.Stream:
			if r.Status != 200 || !strings.HasPrefix(r.Body, "event: snapshot\ndata: ") || !strings.HasSuffix(r.Body, "\n\n") {
				t.Fatalf("bad stream answer for %+v: %+v", req, r)
			}
		case r.Status == 204:
			if r.Body != "" || method != "OPTIONS" {
				t.Fatalf("bad 204 for %+v: %+v", req, r)
			}
		case r.Logs != "":
			if r.Status != 200 || r.Body != "" {
				t.Fatalf("bad logs answer for %+v: %+v", req, r)
			}
		default:
			var body map[string]any
			if err := json.Unmarshal([]byte(r.Body), &body); err != nil {
				t.Fatalf("body is not a JSON object for %+v: %q", req, r.Body)
			}
			if r.Headers["Content-Type"] != "application/json; charset=utf-8" {
				t.Fatalf("bad content type for %+v: %v", req, r.Headers)
			}
			if _, isErr := body["error"]; isErr != (r.Status != 200) {
				t.Fatalf("status %d with body %s", r.Status, r.Body)
			}
		}
		// Security invariants: a non-loopback Host never gets past 403, and without a token
		// (and with auth on) only health, preflights and refusals come back.
		if !apiLoopbackHost(host) && r.Status != 403 {
			t.Fatalf("Host %q got %d", host, r.Status)
		}
		if !authNone && auth == "" && !strings.Contains(query, "token=") && !strings.Contains(path, "token=") &&
			(r.Status == 200 || r.Status == 404 || r.Status == 503) && !strings.Contains(r.Body, `"status":"ok"`) && r.Asset == "" {
			t.Fatalf("unauthenticated %+v got %d: %s", req, r.Status, r.Body)
		}
	})
}
