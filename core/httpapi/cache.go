package httpapi

import (
	"fmt"
	"strings"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

// Store is what the status API reads of the machine: its tasks, and a count of the changes to
// them.
type Store interface {
	// Tasks lists the tasks in launch order, shared, not copied: the API only reads them.
	Tasks() []*task.Task
	// Changes grows whenever the tasks may have changed (every entry point of the machine that
	// can change them counts one).
	Changes() uint64
}

// Cache keeps the status API's recent answers to task reads (GET /v1/tasks and
// /v1/tasks/:id) while the store stays as it is. A dashboard polls the same page over and over,
// and over 10,000 tasks each answer costs a scan and 50 tasks encoded: about a millisecond inside
// WebAssembly, for the same bytes as last time. A change to the store (Store.Changes) drops it
// whole, so an answer is never staler than the store. Answers that depend on the time (health,
// stats, groups, the event stream) are never kept.
type Cache struct {
	answers map[string]Response
	bytes   int
	changes uint64 // the store's Changes the answers were given at
}

// Serve answers one request from store, from the cache when it can (see Serve for the answer).
func (c *Cache) Serve(req Request, store Store, cfg config.APIConfig, now int64) Response {
	if n := store.Changes(); n != c.changes {
		c.clear()
		c.changes = n
	}
	key, cacheable := apiCacheKey(req, cfg)
	if cacheable {
		if r, ok := c.get(key); ok {
			return r
		}
	}
	r := Serve(req, store.Tasks(), cfg, now)
	if cacheable {
		c.put(key, r)
	}
	return r
}

// Bounds on what the cache holds; past either, it starts over.
const (
	apiCacheMaxAnswers = 32
	apiCacheMaxBytes   = 4 << 20
)

// apiCacheKey is what an answer depends on besides the store: the request line, the headers the
// core judges (Host, the token or credential, the Origin), the server's port and the auth
// settings. ok is false for requests whose answers are not kept.
func apiCacheKey(req Request, cfg config.APIConfig) (key string, ok bool) {
	if req.Method != "GET" || !(req.Path == "/v1/tasks" || strings.HasPrefix(req.Path, "/v1/tasks/") && !strings.HasSuffix(req.Path, "/logs") && !strings.HasSuffix(req.Path, "/messages")) {
		return "", false
	}
	host, hasHost := apiHeader(req.Headers, "host")
	auth, hasAuth := apiHeader(req.Headers, "authorization")
	origin, hasOrigin := apiHeader(req.Headers, "origin")
	return fmt.Sprintf("%s?%s\x00%t%s\x00%t%s\x00%t%s\x00%d\x00%s\x00%s", req.Path, req.Query, hasHost, host, hasAuth, auth,
		hasOrigin, origin, req.Port, cfg.Auth, cfg.Token), true
}

func (c *Cache) get(key string) (Response, bool) {
	r, ok := c.answers[key]
	return r, ok
}

func (c *Cache) put(key string, r Response) {
	if r.Status != 200 || r.Stream || r.Logs != "" || r.Messages != "" {
		return
	}
	if c.answers == nil || len(c.answers) >= apiCacheMaxAnswers || c.bytes+len(r.Body) > apiCacheMaxBytes {
		c.answers, c.bytes = map[string]Response{}, 0
	}
	c.answers[key] = r
	c.bytes += len(r.Body)
}

// clear forgets every answer: the store may have changed.
func (c *Cache) clear() {
	if c.answers != nil {
		c.answers, c.bytes = nil, 0
	}
}
