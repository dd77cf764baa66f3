package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/internal/fixture"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// A task still queued has no session; cancelled then, by its own ID, it never gets one: nothing
// is left behind in OpenCode, and its parent hears of it once.
func TestCancelBeforeTheSessionExistsLeavesNoSession(t *testing.T) {
	var queuedID string
	model := mockmodel.Start(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD first":
			return mockmodel.Reply{Text: "first done", Delay: 8 * time.Second} // the window in which the second is still queued
		case req.LastUser == "CANCEL" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "asyncagents_cancel", Args: map[string]any{"task_id": queuedID}}}}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "TWO":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("First", "CHILD first", "general"), taskCall("Never", "CHILD never", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	})
	e, parent := launchTwoWithOneSlot(t, model)
	oc := e.oc
	for _, p := range e.toolParts(parent, "asyncagents_task") {
		if p.State.Input["description"] == "Never" {
			queuedID = idOf(p)
			require.Contains(t, p.State.Output, "status: queued")
		}
	}
	require.Regexp(t, `^bg_[0-9a-f]{22}$`, queuedID)
	e.waitIdle(parent)
	e.promptIn(parent, "CANCEL")
	e.eventually("the cancel answered", 30*time.Second, func() bool { return finishedParts(e.toolParts(parent, "asyncagents_cancel")) })
	cancel := e.toolParts(parent, "asyncagents_cancel")[0]
	require.Equal(t, "completed", cancel.State.Status, cancel.State.Error)
	require.Contains(t, cancel.State.Output, "Cancelled task "+queuedID+` "Never"; it was still queued and never started.`)

	e.eventually("both notices", 60*time.Second, func() bool { return len(e.notices(parent)) == 2 })
	children, err := oc.Children(e.ctx(10*time.Second), parent)
	require.NoError(t, err)
	require.Len(t, children, 1, "the cancelled task never got a session")
	require.Equal(t, "First (@general subagent)", children[0].Title)
	never, ok := findStoredTask(oc, queuedID)
	require.True(t, ok)
	require.Equal(t, task.StatusCancelled, never.Status)
	require.Empty(t, never.SessionID)
	for _, r := range model.Requests() {
		require.NotEqual(t, "CHILD never", r.LastUser, "the cancelled task's prompt reached no model")
	}
}

// A history written by the release before, whose task IDs were the child session's (records
// without "id"), restores unchanged: its task keeps its ID, answers by it, and resumes in its own
// session.
func TestAHistoryOfTheReleaseBeforeRestoresAndResumes(t *testing.T) {
	var oldID string
	script := func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD old":
			return mockmodel.Reply{Text: "old answer"}
		case req.LastUser == "CHILD follow":
			for _, m := range req.Messages {
				if m.Role == "assistant" && strings.Contains(m.Content, "old answer") {
					return mockmodel.Reply{Text: "follow-up, remembering the old answer"}
				}
			}
			return mockmodel.Reply{Text: "follow-up without memory"}
		case req.LastUser == "RESUME" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "asyncagents_task", Args: map[string]any{"resume": oldID, "prompt": "CHILD follow"}}}}
		case req.LastUser == "LIST" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "asyncagents_list", Args: map[string]any{}}}}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Resume #"):
			return mockmodel.Reply{Text: "ok"}
		}
		return mockmodel.Reply{Text: "?"}
	}
	e := start(t, script)
	// A parent and a child that really ran, as the release before left them.
	parent := e.prompt("hello")
	answered := func(session, text string) func() bool {
		return func() bool {
			for _, m := range e.messages(session) {
				for _, p := range m.Parts {
					if m.Info.Role == "assistant" && m.Info.Time.Completed != 0 && strings.Contains(p.Text, text) {
						return true
					}
				}
			}
			return false
		}
	}
	e.eventually("the parent's first answer", 60*time.Second, answered(parent, "?"))
	var child struct {
		ID string `json:"id"`
	}
	require.NoError(t, e.oc.Do(e.ctx(30*time.Second), "POST", "/session", map[string]any{"parentID": parent, "title": "Old job (@general subagent)"}, &child))
	require.NoError(t, e.oc.PromptAsync(e.ctx(30*time.Second), child.ID, "general", "CHILD old"))
	e.eventually("the old child's answer", 60*time.Second, answered(child.ID, "old answer"))
	oldID = child.ID

	// OpenCode stops; the history holds the record as the release before wrote it.
	require.NoError(t, e.oc.Stop())
	record := fmt.Sprintf(`{"task":{"sessionID":%q,"parentSessionID":%q,"parentMessageID":"msg_old","parentAgent":"build","batchId":"msg_old","description":"Old job","prompt":"CHILD old","agent":"general","status":"completed","startedAt":%d,"completedAt":%d,"result":"old answer","progress":{"toolCalls":0,"lastTools":[],"lastUpdate":%d},"resumeCount":0,"isForked":false,"depth":1}}`, oldID, parent, fixture.Base, fixture.Base+1000, fixture.Base)
	history := storageOf(e.oc).History
	require.NoError(t, os.MkdirAll(filepath.Dir(history), 0o700))
	require.NoError(t, os.WriteFile(history, []byte(core.ChecksummedLine(record)), 0o600))
	e.oc = ocserve.Restart(t, e.oc, ocserve.Options{ModelURL: e.model.URL(), Plugins: []string{ocserve.PluginSpec(t)}})
	e.promptIn(parent, "RESUME")
	e.eventually("the resume notice", 60*time.Second, func() bool { return len(e.notices(parent)) == 1 })
	resume := e.toolParts(parent, "asyncagents_task")[0]
	require.Equal(t, "completed", resume.State.Status, resume.State.Error)
	require.Contains(t, resume.State.Output, "task_id: "+oldID+"\nagent: general\ndescription: Old job\nstatus: resumed\nresume: #1\n", "its ID is still its session's")
	n := e.notices(parent)[0]
	require.Regexp(t, `^✓ Resume #1 completed in `, n.visible)
	require.Contains(t, n.hidden, "<task_result>\nfollow-up, remembering the old answer\n</task_result>")
	e.waitIdle(parent)
	e.promptIn(parent, "LIST")
	e.eventually("the list", 30*time.Second, func() bool { return finishedParts(e.toolParts(parent, "asyncagents_list")) })
	require.Contains(t, e.toolParts(parent, "asyncagents_list")[0].State.Output, "- "+oldID+" (resumed) | completed | \"Old job\"")
}
