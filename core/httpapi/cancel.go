package httpapi

import (
	"fmt"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

// POST /v1/tasks/:id/cancel: the dashboard's cancel. It changes state, so it always needs a
// request from the server's own page (its Origin): a page of another origin, even one the user
// opened, cannot cancel. It needs the token (or the dashboard's credential) as every read does:
// with ASYNCAGENTS_API_AUTH=none, none, so the dashboard, which then holds none, can cancel. The task ends as asyncagents_cancel ends it (Machine.cancel): the child
// is aborted and the parent gets the usual ⊘ notice. ?reason= gives the reason the notice
// carries.

// apiCancelReason is the reason recorded when the request gives none.
const apiCancelReason = "cancelled from the dashboard"

func apiServeCancel(req Request, tasks []*task.Task, id string, q []apiQueryParam, cfg config.APIConfig) Response {
	if r, denied := apiMayChange(req, q, cfg, "a cancel", "cancel the task in OpenCode"); denied {
		return r
	}
	t := apiFindTask(tasks, id)
	if t == nil {
		return apiFail(404, fmt.Sprintf("task %s not found", apiEcho(id)))
	}
	if t.Status.Terminal() {
		return apiFail(409, fmt.Sprintf("task %s already ended (%s); nothing was cancelled", t.ID, t.Status))
	}
	reason := apiQueryGet(q, "reason")
	if reason == "" {
		reason = apiCancelReason
	}
	return Response{Status: 200, Headers: apiJSONHeaders(), Cancel: t, CancelReason: reason}
}

// apiMayChange holds a request that changes state (what, "a cancel") to the rules every such
// request follows: the server's own Origin always, the token unless auth is "none", and a server
// that can act (instead: what the user does, for a read-only one). It answers the refusal.
func apiMayChange(req Request, q []apiQueryParam, cfg config.APIConfig, what, instead string) (Response, bool) {
	if !apiOwnOrigin(req) {
		return apiFail(403, "forbidden: "+what+" must come from this server's own dashboard (its Origin, http://127.0.0.1:<port> or http://localhost:<port>)"), true
	}
	if r, denied := apiAuthorize(req, q, false, cfg); denied {
		return r, true
	}
	if cfg.ReadOnly {
		r := apiFail(405, "this server only reads the stored history (asyncagents serve): "+instead)
		r.Headers["Allow"] = apiAllowMethods
		return r, true
	}
	return Response{}, false
}
