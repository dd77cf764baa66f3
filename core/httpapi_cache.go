package core

import (
	"fmt"
	"strings"
)

// apiCache keeps the status API's recent answers to task reads (GET /v1/tasks and
// /v1/tasks/:id) while the store stays as it is. A dashboard polls the same page over and over,
// and over 10,000 tasks each answer costs a scan and 50 tasks encoded: about a millisecond inside
// WebAssembly, for the same bytes as last time. Every entry point that can change the store
// (Step, Restore, Follow) drops it whole, so an answer is never staler than the store. Answers
// that depend on the time (health, stats, groups, the event stream) are never kept.
type apiCache struct {
	answers map[string]HTTPResponse
	bytes   int
}

// Bounds on what the cache holds; past either, it starts over.
const (
	apiCacheMaxAnswers = 32
	apiCacheMaxBytes   = 4 << 20
)

// apiCacheKey is what an answer depends on besides the store: the request line, the headers the
// core judges (Host, the token, the Origin and the cookie), the server's port and the auth
// settings. ok is false for requests whose answers are not kept.
func apiCacheKey(req HTTPRequest, cfg APIConfig) (key string, ok bool) {
	if req.Method != "GET" || !(req.Path == "/v1/tasks" || strings.HasPrefix(req.Path, "/v1/tasks/") && !strings.HasSuffix(req.Path, "/logs")) {
		return "", false
	}
	host, hasHost := apiHeader(req.Headers, "host")
	auth, hasAuth := apiHeader(req.Headers, "authorization")
	origin, hasOrigin := apiHeader(req.Headers, "origin")
	cookie, _ := apiHeader(req.Headers, "cookie")
	return fmt.Sprintf("%s?%s\x00%t%s\x00%t%s\x00%t%s\x00%s\x00%d\x00%s\x00%s", req.Path, req.Query, hasHost, host, hasAuth, auth,
		hasOrigin, origin, cookie, req.Port, cfg.Auth, cfg.Token), true
}

func (c *apiCache) get(key string) (HTTPResponse, bool) {
	r, ok := c.answers[key]
	return r, ok
}

func (c *apiCache) put(key string, r HTTPResponse) {
	if r.Status != 200 || r.Stream || r.Logs != "" {
		return
	}
	if c.answers == nil || len(c.answers) >= apiCacheMaxAnswers || c.bytes+len(r.Body) > apiCacheMaxBytes {
		c.answers, c.bytes = map[string]HTTPResponse{}, 0
	}
	c.answers[key] = r
	c.bytes += len(r.Body)
}

// clear forgets every answer: the store may have changed.
func (c *apiCache) clear() {
	if c.answers != nil {
		c.answers, c.bytes = nil, 0
	}
}
