package core

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// reconnect drops worker's stream and brings it up again; returns the permission reads the
// machine asked for then.
func (h *wkHarness) reconnect(worker string) []Effect {
	h.state(worker, false, "connection reset")
	return ofKind(h.state(worker, true, ""), EffectPermissionList)
}

// listed answers a permission read with OpenCode's pending requests (JSON).
func (h *wkHarness) listed(read Effect, requests string) []Effect {
	return h.run(Event{Type: EventEffectDone, EffectID: read.ID, OK: true, Result: json.RawMessage(requests)})
}

func pendingOn(session, id string) string {
	return fmt.Sprintf(`[{"id":%q,"sessionID":%q,"permission":"bash","patterns":["make test"],"metadata":{},"always":[]}]`, id, session)
}

// A question a remote child asked while the worker's stream was down reaches the user once the
// stream is up again, once; an answer given meanwhile clears the mark.
func TestAWorkersPendingPermissionsAreReadWhenItsStreamComesUp(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	h.state("w1", true, "")
	h.state("w2", true, "")
	r, _ := h.launchOn("a", "w1")
	tk := h.taskOf(r)
	require.NotEmpty(t, tk.SessionID)
	h.idleParent()

	reads := h.reconnect("w1")
	require.Len(t, reads, 1, "one read per directory where this parent's tasks work")
	require.Equal(t, "w1", reads[0].Worker)
	require.Equal(t, "/srv/w1/repo", reads[0].Directory)
	require.NotNil(t, reads[0].Remote)
	require.Empty(t, h.reconnect("w2"), "no task of this parent works on w2")

	out := h.listed(reads[0], pendingOn(tk.SessionID, "per_1"))
	require.NotNil(t, tk.pendingPermission("per_1"), "the request the stream missed is marked")
	notices := parentNotices(out)
	require.Len(t, notices, 1, "the parent is told, as for a request the stream carried")
	require.Contains(t, notices[0].Parts[0].Text, "waits for permission: bash make test")
	require.Len(t, ofKind(out, EffectToast), 1)

	// Still pending at the next reconnect: nothing more is said.
	out = h.listed(h.reconnect("w1")[0], pendingOn(tk.SessionID, "per_1"))
	require.Empty(t, parentNotices(out))
	require.Len(t, tk.Permissions, 1)

	// Answered (in `opencode attach`) while the stream was down: the mark clears.
	h.listed(h.reconnect("w1")[0], `[]`)
	require.Nil(t, tk.pendingPermission(""))
	require.Equal(t, PermissionGone, tk.Permissions[0].Reply)
	require.Equal(t, task.StatusRunning, tk.Status)

	// Listed again by a later read: the worker holds it after all, so it is marked again.
	out = h.listed(h.reconnect("w1")[0], pendingOn(tk.SessionID, "per_1"))
	require.Len(t, parentNotices(out), 1)
	require.NotNil(t, tk.pendingPermission("per_1"))
	require.Len(t, tk.Permissions, 1)

	// Answered for real (in the dashboard), then listed by a read older than the answer: left.
	h.from("w1", "permission.replied", fmt.Sprintf(`{"sessionID":%q,"requestID":"per_1","reply":"once"}`, tk.SessionID))
	out = h.listed(h.reconnect("w1")[0], pendingOn(tk.SessionID, "per_1"))
	require.Empty(t, parentNotices(out))
	require.Equal(t, "once", tk.Permissions[0].Reply)
}

// The read marks only this worker's tasks in that directory; a failed read changes nothing.
func TestAWorkersPermissionReadMarksItsOwnTasksOnly(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	h.state("w1", true, "")
	h.state("w2", true, "")
	t1 := h.taskOf(first(h.launchOn("a", "w1")))
	t2 := h.taskOf(first(h.launchOn("b", "w2")))
	h.from("w1", "permission.asked", fmt.Sprintf(`{"id":"per_seen","sessionID":%q,"permission":"edit","patterns":["a.go"]}`, t1.SessionID))
	require.NotNil(t, t1.pendingPermission("per_seen"))

	reads := h.reconnect("w1")
	require.Len(t, reads, 1)
	h.run(Event{Type: EventEffectDone, EffectID: reads[0].ID, Error: "worker w1: listing the pending permission requests: timed out after 10 s"})
	require.NotNil(t, t1.pendingPermission("per_seen"), "a failed read clears nothing")

	reads = h.reconnect("w1")
	both := fmt.Sprintf(`[{"id":"per_other","sessionID":%q,"permission":"bash","patterns":["ls"]},{"id":"per_stranger","sessionID":"ses_not_ours","permission":"bash","patterns":["ls"]}]`, t2.SessionID)
	h.listed(reads[0], both)
	require.Empty(t, t2.Permissions, "w1's answer says nothing of a task on w2")
	require.Equal(t, PermissionGone, t1.Permissions[0].Reply, "w1 no longer holds it")

	h.run(Event{Type: EventEffectDone, EffectID: h.reconnect("w1")[0].ID, OK: true, Result: json.RawMessage(`{"not":"a list"}`)})
	require.Len(t, t1.Permissions, 1)
}

// The answer is a snapshot that arrives apart from the new stream's events: a request asked
// after it stays marked, one answered before it is not marked, an older read's answer is not
// taken, and a real answer after a "gone" is recorded.
func TestAWorkersPermissionReadAgainstTheStreamsEvents(t *testing.T) {
	h := newWK(t, twoWorkers(func(c *config.Config) { c.Permission.TimeoutMs = 60_000 }))
	h.state("w1", true, "")
	tk := h.taskOf(first(h.launchOn("a", "w1")))
	h.idleParent()
	ask := func(id string) []Effect {
		return h.from("w1", "permission.asked", fmt.Sprintf(`{"id":%q,"sessionID":%q,"permission":"bash","patterns":["ls"]}`, id, tk.SessionID))
	}
	reply := func(id, answer string) {
		h.from("w1", "permission.replied", fmt.Sprintf(`{"sessionID":%q,"requestID":%q,"reply":%q}`, tk.SessionID, id, answer))
	}

	read := h.reconnect("w1")[0]
	ask("per_after")
	h.listed(read, `[]`)
	require.NotNil(t, tk.pendingPermission("per_after"), "asked after the snapshot: not cleared by it")

	read = h.reconnect("w1")[0]
	reply("per_gap", "reject") // asked and answered while the stream was down
	out := h.listed(read, pendingOn(tk.SessionID, "per_gap"))
	require.Nil(t, tk.permission("per_gap"), "answered before the snapshot arrived: not marked")
	require.Empty(t, parentNotices(out))

	older := h.reconnect("w1")[0]
	newer := h.reconnect("w1")[0]
	h.listed(newer, `[]`)
	require.Equal(t, PermissionGone, tk.permission("per_after").Reply)
	ask("per_late")
	h.listed(older, pendingOn(tk.SessionID, "per_after"))
	require.Equal(t, PermissionGone, tk.permission("per_after").Reply, "an older read's answer is not taken")
	require.NotNil(t, tk.pendingPermission("per_late"))

	// The worker answered in the dashboard's "always" before the read; its event came after.
	reply("per_after", "always")
	require.Equal(t, "always", tk.permission("per_after").Reply, "the real answer replaces gone")

	// A mark the worker still holds has its timeout armed again with the time left.
	h.now += 10_000
	out = h.listed(h.reconnect("w1")[0], fmt.Sprintf(`[{"id":"per_late","sessionID":%q,"permission":"bash","patterns":["ls"]}]`, tk.SessionID))
	timers := ofKind(out, EffectTimerSet)
	require.Len(t, timers, 1)
	require.Equal(t, permissionTimerPrefix+tk.ID+":per_late", timers[0].TimerID)
	require.InDelta(t, 50_000, timers[0].DelayMs, 100, "60 s less the 10 s and the steps since it was asked")
	require.LessOrEqual(t, timers[0].DelayMs, int64(50_000))
}

// A task in a worktree on the worker is another of its instances: read on its own, and the
// clone's answer says nothing of it.
func TestAWorkersPermissionReadIsPerDirectory(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	h.state("w1", true, "")
	inClone := h.taskOf(first(h.launchOn("a", "w1")))
	inTree := h.taskOf(first(h.launchOn("b", "w1")))
	inTree.Worktree = &task.Worktree{WorkerPath: "/srv/w1/repo/.wt/b", Branch: "asyncagents/b"}
	for _, tk := range []*run{inClone, inTree} {
		h.from("w1", "permission.asked", fmt.Sprintf(`{"id":"per_%s","sessionID":%q,"permission":"bash","patterns":["ls"]}`, tk.ID, tk.SessionID))
	}
	reads := h.reconnect("w1")
	require.Len(t, reads, 2)
	dirs := map[string]Effect{}
	for _, r := range reads {
		dirs[r.Directory] = r
	}
	h.listed(dirs["/srv/w1/repo"], `[]`)
	require.Equal(t, PermissionGone, inClone.Permissions[0].Reply)
	require.NotNil(t, inTree.pendingPermission(""), "the clone's instance holds none of the worktree's requests")
	h.listed(dirs["/srv/w1/repo/.wt/b"], `[]`)
	require.Nil(t, inTree.pendingPermission(""))
}
