package core

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/asyncagents/asyncagents/core/budget"
	"github.com/asyncagents/asyncagents/core/httpapi"
	"github.com/asyncagents/asyncagents/core/ocevents"
	"github.com/asyncagents/asyncagents/core/task"
)

// A child's permission request reaches the user. A child that needs approval (a rule set to
// "ask") waits in a session nobody watches: OpenCode's TUI shows the prompts of a root session's
// direct children only. When a task's child session, or any session below it, asks, the task is
// marked waiting for permission (not stalled), its parent gets one visible line without a model
// turn and the TUI a toast, and the list, the output, the API and the dashboard show the request.
// The user answers in the dashboard (POST /v1/tasks/:id/permission), in the TUI, or through
// OpenCode's API; permission.replied clears the mark whoever answered. No tool lets the parent
// model answer: these are the user's decisions. permission.timeoutMs rejects a request left
// unanswered, telling the child to go on without it.

// EffectPermissionReply answers a permission request through OpenCode (POST
// /permission/:requestID/reply {reply, message?}): RequestID, Answer (once, always or reject) and
// Message. Replies when OpenCode has answered.
const EffectPermissionReply = "permission.reply"

// permissionTimerPrefix names the timer of an unanswered request's timeout.
const permissionTimerPrefix = "permission:"

// maxSessionsBelow bounds the sessions below others the machine remembers.
const maxSessionsBelow = 4096

// onSessionCreatedEvent remembers the parent of a session created under another (a subagent run
// through OpenCode's own task tool, by a task's child or by the user's session): a permission
// request there is traced to its task, a task launched there counts its depth from that task, and
// its cost counts against the user's session above (rootSession). Sessions of the local server
// all pass here; a worker's only when they lie below a task's child (workers.go).
func (m *Machine) onSessionCreatedEvent(p ocevents.SessionCreated) {
	if p.Info.ParentID != "" {
		m.noteSessionBelow(p.Info.ID, p.Info.ParentID)
	}
}

// noteSessionBelow remembers session's parent, within maxSessionsBelow.
func (m *Machine) noteSessionBelow(session, parent string) {
	if m.sessionsBelow.full(session) {
		// The way above a task at work is read by nothing while the subagent that launched it
		// is idle: read now, it moves to the generation that stays.
		for _, t := range m.activeTasks() {
			m.rootSession(t.ParentSessionID)
		}
	}
	m.sessionsBelow.set(session, parent)
}

// taskBelow is the task whose child session is session, or is above it (the sessions below
// tasks' children lead up to them: budget's walk, at most maxSessionHops steps).
func (m *Machine) taskBelow(session string) *run {
	at, ok := budget.Find(session, maxSessionHops, m.sessionsBelow.get, func(s string) bool {
		t := m.task(s)
		return t != nil && t.SessionID != ""
	})
	if !ok {
		return nil
	}
	return m.task(at)
}

// onPermissionAsked marks the task whose child (or a session below it) asks.
func (m *Machine) onPermissionAsked(p ocevents.PermissionAsked) {
	t := m.taskBelow(p.SessionID)
	if t == nil || t.Status.Terminal() || t.pendingPermission(p.ID) != nil {
		return
	}
	t.Permissions = append(t.Permissions, task.PermissionRequest{ID: p.ID, SessionID: p.SessionID, Permission: p.Permission, Patterns: p.Patterns, At: m.now})
	if n := len(t.Permissions); n > task.MaxPermissions {
		t.Permissions = append([]task.PermissionRequest{}, t.Permissions[n-task.MaxPermissions:]...)
	}
	t.StalledSince, t.stallNext = 0, 0 // waiting for the user is not a stall
	t.Progress.LastUpdate = m.now
	m.touch(t)
	what := t.Permissions[len(t.Permissions)-1].What()
	m.toast(ToastWarning, fmt.Sprintf(permissionToastTitleFmt, t.Description), what)
	// The parent's session gets the line, and so does the user's session above it when the task
	// is nested: the intermediate child's session is read by a model, not by the user.
	// It speaks as the agent of that session's own turns, as the task's other notices do.
	// A task launched from the user's session is its own top task: told once.
	to := []*run{t}
	if top := m.topTask(t); top != t && top.ParentSessionID != t.ParentSessionID {
		to = append(to, top)
	}
	for _, to := range to {
		if to.ParentSessionID == "" {
			continue
		}
		m.post(to.ParentSessionID, notice{
			tasks:      []noticeTask{{ID: t.ID}},
			permission: p.ID,
			agent:      to.ParentAgent,
			parts: []TextPart{
				{Type: "text", Text: fmt.Sprintf(permissionVisibleFmt, t.Description, what)},
				{Type: "text", Text: fmt.Sprintf(permissionHiddenFmt, t.ID, t.Description, what), Synthetic: true},
			},
		})
	}
	if ms := m.cfg.Permission.TimeoutMs; ms > 0 {
		m.emit(Effect{Kind: EffectTimerSet, TimerID: permissionTimerPrefix + t.ID + ":" + p.ID, DelayMs: ms})
	}
}

// topTask is the task launched from the user's session above t (t itself when it was). A task
// launched from a subagent's session below another task's child is that task's, as a child's own
// launch is: the walk goes through the sessions below (taskBelow).
func (m *Machine) topTask(t *run) *run {
	for range m.cfg.MaxDepth + 1 {
		up := m.taskBelow(t.ParentSessionID)
		if up == nil || up == t {
			break
		}
		t = up
	}
	return t
}

// onPermissionReplied clears the request, whoever answered it.
func (m *Machine) onPermissionReplied(p ocevents.PermissionReplied) {
	t := m.taskBelow(p.SessionID)
	if t == nil {
		return
	}
	r := t.pendingPermission(p.RequestID)
	if r == nil {
		// Not pending here: asked while a worker's stream was down, or cleared as gone by a
		// read of the worker's requests before this answer came (workers_permissions.go).
		if g := t.permission(p.RequestID); g != nil && g.Reply == PermissionGone {
			g.Reply = p.Reply
			m.touch(t)
		} else if g == nil {
			m.noteRepliedUnseen(p.RequestID)
		}
		return
	}
	m.clearPermission(t, r, p.Reply)
}

// clearPermission records reply to t's pending request r: the wait is over.
func (m *Machine) clearPermission(t *run, r *task.PermissionRequest, reply string) {
	r.Reply, r.RepliedAt = reply, m.now
	t.Progress.LastUpdate = m.now // the wait ends: the silence before it was no stall
	m.touch(t)
	m.emit(Effect{Kind: EffectTimerClear, TimerID: permissionTimerPrefix + t.ID + ":" + r.ID})
}

// onPermissionTimeout rejects a request nobody answered in permission.timeoutMs.
func (m *Machine) onPermissionTimeout(rest string) {
	taskID, requestID, _ := strings.Cut(rest, ":")
	t := m.task(taskID)
	if t == nil || t.Status.Terminal() {
		return
	}
	r := t.pendingPermission(requestID)
	if r == nil {
		return
	}
	r.TimedOut = true
	m.touch(t)
	m.log("info", fmt.Sprintf(permissionTimedOutLogFmt, t.ID, requestID))
	m.replyPermission(t, requestID, task.PermissionReject, permissionTimeoutMessage)
}

// replyPermission forwards an answer to OpenCode; the mark clears on permission.replied.
func (m *Machine) replyPermission(t *run, requestID, reply, message string) {
	m.request(Effect{Kind: EffectPermissionReply, TaskID: t.ID, RequestID: requestID, Answer: reply, Message: message},
		pending{taskID: t.ID, answered: &answeredPermission{requestID, reply}})
}

// onPermissionReplyDone logs an answer OpenCode refused (the request was answered elsewhere
// first, or is gone).
func (m *Machine) onPermissionReplyDone(p pending, ev Event) {
	if !ev.OK {
		m.log("warn", fmt.Sprintf(permissionReplyFailedFmt, p.taskID, ev.Error))
		return
	}
	m.onPolledReplied(p) // no permission.replied comes from a polled worker (workers_poll.go)
}

// pendingPermission is t's unanswered request with that ID (any, for ""), or nil.
func (t *run) pendingPermission(id string) *task.PermissionRequest {
	for i := len(t.Permissions) - 1; i >= 0; i-- {
		r := &t.Permissions[i]
		if r.Reply == "" && (id == "" || r.ID == id) {
			return r
		}
	}
	return nil
}

// answerPermission forwards the dashboard's answer (httpapi.PermissionAnswer) and answers with
// the task; its effects go back to the host as a cancel's do.
func (m *Machine) answerPermission(r httpapi.Response, now int64) (httpapi.Response, []Effect) {
	a := r.Permission
	r.Permission = nil
	t := m.task(a.TaskID)
	if t == nil {
		return httpapi.Fail(409, fmt.Sprintf(apiForeignPermissionFmt, a.TaskID)), nil
	}
	if now > m.now {
		m.now = now
	}
	m.out = nil
	m.replyPermission(t, a.RequestID, a.Reply, a.Message)
	effects := m.out
	m.out = nil
	b, err := json.Marshal(map[string]any{"forwarded": true, "taskId": t.ID, "requestId": a.RequestID, "reply": a.Reply})
	if err != nil {
		return httpapi.Fail(500, "internal error: encoding the response failed"), effects
	}
	r.Body = string(b)
	return r, effects
}
