package core

import "fmt"

// POST /v1/tasks/:id/cancel: the dashboard's cancel. It changes state, so it always needs the
// token (the bearer token or the dashboard's cookie, whatever ASYNCAGENTS_API_AUTH says) and a
// request from the server's own page (its Origin): a page of another origin, even one the user
// opened, cannot cancel. The task ends as asyncagents_cancel ends it (Machine.cancel): the child
// is aborted and the parent gets the usual ⊘ notice. ?reason= gives the reason the notice
// carries.

// apiCancelReason is the reason recorded when the request gives none.
const apiCancelReason = "cancelled from the dashboard"

func apiServeCancel(req HTTPRequest, tasks []*Task, id string, q []apiQueryParam, cfg APIConfig) HTTPResponse {
	if !apiOwnOrigin(req) {
		return apiFail(403, "forbidden: a cancel must come from this server's own dashboard (its Origin, http://127.0.0.1:<port> or http://localhost:<port>)")
	}
	if r, denied := apiCheckToken(req, q, false, cfg); denied {
		return r
	}
	if cfg.ReadOnly {
		r := apiFail(405, "this server only reads the stored history (asyncagents serve): cancel the task in OpenCode")
		r.Headers["Allow"] = apiAllowMethods
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
	return HTTPResponse{Status: 200, Headers: apiJSONHeaders(), cancel: t, cancelReason: reason}
}

// ServeHTTPEffects is ServeHTTP for a request that may change state: a cancel is carried out
// here, as a step carries out a tool's, and its effects (the abort, the notice, the history
// line, the event frames) come back for the host to carry out. Other requests answer as
// ServeHTTP does, with no effects.
func (m *Machine) ServeHTTPEffects(req HTTPRequest, cfg APIConfig, now int64) (HTTPResponse, []Effect) {
	r := m.ServeHTTP(req, cfg, now)
	t := r.cancel
	if t == nil {
		return r, nil
	}
	r.cancel = nil
	m.apiCache.clear()
	if now > m.now {
		m.now = now
	}
	m.out = nil
	m.cancel(t, r.cancelReason)
	m.persistDirty()
	effects := m.out
	m.out = nil
	b, err := appendTask(nil, apiOut(t))
	if err != nil {
		return apiFail(500, "internal error: encoding the response failed: "+err.Error()), effects
	}
	r.Body = string(b)
	return r, effects
}
