// Package httpapi is the HTTP status API, as pure functions: routing, the Host check,
// authentication, filters, pagination, stats, error texts, the event stream's frames (sse.go)
// the answer cache (cache.go) and the dashboard's one-time codes and credential
// (dashboard_code.go; the codes are state the machine holds, Codes). A host hands it every request with the tasks and the time and
// writes back the answer; the host owns the socket, the SSE connections and the messages of a
// task's session (for /logs).
//
// It reads the machine through Store, a small read interface (the tasks in launch order, and a
// count of changes that drops the cache), never the machine itself. It imports config, task,
// history (to read a task whole where an answer needs more than its head) and the leaves.
package httpapi
