package httpapi

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

// POST /v1/tasks/:id/permission {"requestId", "reply": "once"|"always"|"reject", "message"?}: the
// user's answer to the permission request requestId of a task's child, forwarded to OpenCode
// (POST /permission/:requestID/reply). It changes state, so it follows the cancel's rules: the
// server's own Origin always, and the token (or the dashboard's credential) unless
// ASYNCAGENTS_API_AUTH=none. The mark clears when OpenCode publishes permission.replied. The
// answer names its request: a child may ask again while the user reads the first request, and an
// "always" meant for one command must not grant the next. A request no longer pending is a 409.

// MaxRequestBodyBytes bounds the body a host passes with a POST (the permission answer).
const MaxRequestBodyBytes = 16 << 10

// maxPermissionMessageChars bounds the message sent with a reject.
const maxPermissionMessageChars = 2000

// PermissionAnswer is a POST /v1/tasks/:id/permission that passed its checks: the machine
// forwards it and answers with the task.
type PermissionAnswer struct {
	TaskID    string
	RequestID string
	Reply     string
	Message   string
}

func apiServePermission(req Request, tasks []*task.Task, id string, q []apiQueryParam, cfg config.APIConfig) Response {
	if r, denied := apiMayChange(req, q, cfg, "a permission answer", "answer the request in OpenCode"); denied {
		return r
	}
	if len(req.Body) > MaxRequestBodyBytes {
		return apiFail(413, fmt.Sprintf("the body is over %d bytes", MaxRequestBodyBytes))
	}
	var body struct {
		RequestID *string `json:"requestId"`
		Reply     *string `json:"reply"`
		Message   *string `json:"message"`
	}
	if err := json.Unmarshal([]byte(req.Body), &body); err != nil {
		return apiFail(400, `the body must be a JSON object {"requestId": string, "reply": `+quoted(task.PermissionReplies, "|")+`, "message"?: string}: `+err.Error())
	}
	reply := ""
	if body.Reply != nil {
		reply = *body.Reply
	}
	if !slices.Contains(task.PermissionReplies, reply) {
		last := len(task.PermissionReplies) - 1
		return apiFail(400, fmt.Sprintf(`reply must be %s or %q, got %s`, quoted(task.PermissionReplies[:last], ", "), task.PermissionReplies[last], apiEcho(reply)))
	}
	if body.RequestID == nil || *body.RequestID == "" {
		return apiFail(400, "requestId is required: the ID of the request answered (the task's view.permissionId)")
	}
	msg := ""
	if body.Message != nil {
		msg = *body.Message
	}
	if utf8.RuneCountInString(msg) > maxPermissionMessageChars {
		return apiFail(400, fmt.Sprintf("message is over %d characters", maxPermissionMessageChars))
	}
	t := apiFindTask(tasks, id)
	if t == nil {
		return apiFail(404, fmt.Sprintf("task %s not found", apiEcho(id)))
	}
	if t.Status.Terminal() || t.WaitingPermission() == nil {
		return apiFail(409, fmt.Sprintf("task %s waits for no permission; nothing was sent", t.ID))
	}
	rid := *body.RequestID
	for i := range t.Permissions {
		if p := &t.Permissions[i]; p.ID == rid && p.Reply == "" {
			return Response{Status: 202, Headers: apiJSONHeaders(), Permission: &PermissionAnswer{TaskID: t.ID, RequestID: p.ID, Reply: reply, Message: msg}}
		}
	}
	return apiFail(409, fmt.Sprintf("request %s of task %s is no longer pending (answered, or not this task's); nothing was sent", apiEcho(rid), t.ID))
}

// quoted writes words quoted and joined by sep: "once"|"always"|"reject".
func quoted(words []string, sep string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = strconv.Quote(w)
	}
	return strings.Join(q, sep)
}
