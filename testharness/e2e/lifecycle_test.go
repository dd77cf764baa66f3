package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// promptIn sends text to an existing session on the build agent.
func (e *env) promptIn(sessionID, text string) {
	e.t.Helper()
	require.NoError(e.t, e.oc.PromptAsync(e.ctx(30*time.Second), sessionID, "build", text))
}

// waitIdle waits until OpenCode no longer lists the session as busy. (ocserve.WaitIdle also
// wants a finished assistant message last, which a session whose newest message is a noReply
// notice never has.)
func (e *env) waitIdle(sessionID string) {
	e.t.Helper()
	e.eventually("session "+sessionID+" idle", 90*time.Second, func() bool {
		st, err := e.oc.Status(e.ctx(10 * time.Second))
		require.NoError(e.t, err)
		_, busy := st[sessionID]
		return !busy
	})
}

// parentTurns counts the model requests made for the conversation that started with first.
func parentTurns(model *mockmodel.Server, first string) int {
	n := 0
	for _, r := range model.Turns() {
		if firstUser(r) == first {
			n++
		}
	}
	return n
}

// idOf reads the task ID from a launch answer.
func idOf(p ocserve.Part) string {
	return strings.TrimPrefix(strings.SplitN(p.State.Output, "\n", 2)[0], "task_id: ")
}

// A batch of three tasks finishing 3 s apart wakes the parent once, when the last one is done;
// the first two notices are in its history without a model turn. (Native background subagents
// spend a turn on each.)
func TestBatchWakesParentOnce(t *testing.T) {
	delays := map[string]time.Duration{"one": 500 * time.Millisecond, "two": 3500 * time.Millisecond, "three": 6500 * time.Millisecond}
	e := start(t, func(req mockmodel.Request) mockmodel.Reply {
		if name, ok := strings.CutPrefix(req.LastUser, "CHILD "); ok {
			return mockmodel.Reply{Text: "answer " + name, Delay: delays[name]}
		}
		if lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \"") {
			return mockmodel.Reply{Text: "waiting"}
		}
		if req.LastUser == "BATCH" {
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("one", "CHILD one", "general"), taskCall("two", "CHILD two", "general"), taskCall("three", "CHILD three", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	})
	parent := e.prompt("BATCH")
	e.eventually("three notices", 60*time.Second, func() bool { return len(e.notices(parent)) == 3 })
	e.waitIdle(parent)

	progress := regexp.MustCompile(`Task Progress: (\d)/3$`)
	for i, n := range e.notices(parent) {
		m := progress.FindStringSubmatch(n.visible)
		require.NotNil(t, m, n.visible)
		require.Equal(t, fmt.Sprint(i+1), m[1], "notices in finishing order")
	}
	// The launch turn, the turn that reads the launch answers, and one turn for the whole batch.
	require.Equal(t, 3, parentTurns(e.model, "BATCH"), "parent model turns")
	last := e.model.Turns()[len(e.model.Turns())-1]
	require.Equal(t, "BATCH", firstUser(last))
	for _, name := range []string{"one", "two", "three"} {
		found := false
		for _, m := range last.Messages {
			found = found || strings.Contains(m.Content, "<task_result>\nanswer "+name+"\n</task_result>")
		}
		require.True(t, found, "the waking turn sees every result of the batch (%s)", name)
	}
}

// Cancel stops a running child with the ⊘ notice; list shows this session's tasks with their
// status; clear forgets finished tasks and keeps running ones.
func TestCancelListClear(t *testing.T) {
	var slowID, slowSession string
	e := start(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD slow":
			return mockmodel.Reply{Text: "never", Delay: 5 * time.Minute}
		case req.LastUser == "CHILD quick":
			return mockmodel.Reply{Text: "quick answer"}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "LAUNCH":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Slow job", "CHILD slow", "general"), taskCall("Quick job", "CHILD quick", "general")}}
		case req.LastUser == "CANCEL":
			// By the child session's ID: a cancel takes either ID.
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "asyncagents_cancel", Args: map[string]any{"task_id": slowSession, "reason": "changed my mind"}}}}
		case req.LastUser == "LIST":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "asyncagents_list", Args: map[string]any{}}}}
		case req.LastUser == "CLEAR":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "asyncagents_clear", Args: map[string]any{}}}}
		}
		return mockmodel.Reply{Text: "?"}
	})
	parent := e.prompt("LAUNCH")
	e.eventually("the quick task's notice", 60*time.Second, func() bool { return len(e.notices(parent)) == 1 })
	e.waitIdle(parent)
	for _, p := range e.toolParts(parent, "asyncagents_task") {
		if p.State.Input["description"] == "Slow job" {
			slowID = idOf(p)
		}
	}
	require.NotEmpty(t, slowID)
	slowSession = e.sessionOf(slowID)

	e.promptIn(parent, "CANCEL")
	e.eventually("the cancel answered", 30*time.Second, func() bool { return finishedParts(e.toolParts(parent, "asyncagents_cancel")) })
	cancel := e.toolParts(parent, "asyncagents_cancel")[0]
	require.Equal(t, "completed", cancel.State.Status, cancel.State.Error)
	require.Contains(t, cancel.State.Output, "Cancelled task "+slowID+` "Slow job" after `)
	e.waitIdle(parent)
	e.eventually("the ⊘ notice", 30*time.Second, func() bool { return len(e.notices(parent)) == 2 })
	require.Regexp(t, `^⊘ Agent "Slow job" cancelled after [0-9.]+m?s\.\nTask Progress: 2/2$`, e.notices(parent)[1].visible)
	require.Contains(t, e.notices(parent)[1].hidden, "reason: changed my mind")
	// The child really stopped: OpenCode marks its answer aborted and it is not busy.
	e.eventually("the child aborted", 30*time.Second, func() bool {
		for _, m := range e.messages(slowSession) {
			if m.Info.Error != nil && m.Info.Error.Name == "MessageAbortedError" {
				return true
			}
		}
		return false
	})

	e.promptIn(parent, "LIST")
	e.eventually("the list answered", 30*time.Second, func() bool { return finishedParts(e.toolParts(parent, "asyncagents_list")) })
	list := e.toolParts(parent, "asyncagents_list")[0].State.Output
	require.Contains(t, list, "Background tasks of this session (2):")
	require.Contains(t, list, "- "+slowID+" | session "+slowSession+` | cancelled | "Slow job" | @general |`)
	require.Contains(t, list, `| completed | "Quick job" | @general |`)
	e.waitIdle(parent)

	// Another session has no tasks, and creating it cleared nobody's.
	other := e.prompt("LIST")
	e.eventually("the other list", 30*time.Second, func() bool { return finishedParts(e.toolParts(other, "asyncagents_list")) })
	require.Equal(t, "No background tasks found", e.toolParts(other, "asyncagents_list")[0].State.Output)

	e.promptIn(parent, "CLEAR")
	e.eventually("the clear answered", 30*time.Second, func() bool { return finishedParts(e.toolParts(parent, "asyncagents_clear")) })
	require.Equal(t, "Cleared 2 finished tasks.", e.toolParts(parent, "asyncagents_clear")[0].State.Output)
	e.waitIdle(parent)
	e.promptIn(parent, "LIST")
	e.eventually("the second list", 30*time.Second, func() bool {
		parts := e.toolParts(parent, "asyncagents_list")
		return len(parts) == 2 && finishedParts(parts)
	})
	require.Equal(t, "No background tasks found", e.toolParts(parent, "asyncagents_list")[1].State.Output)
}

// Resume continues a completed task in its own session, with its history; the notice reads
// "Resume #1 completed"; list marks it (resumed); a resume of a deleted session is refused.
func TestResume(t *testing.T) {
	var taskID string
	e := start(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD first":
			return mockmodel.Reply{Text: "first answer"}
		case req.LastUser == "CHILD follow up":
			// The child sees its own earlier exchange.
			for _, m := range req.Messages {
				if m.Role == "assistant" && strings.Contains(m.Content, "first answer") {
					return mockmodel.Reply{Text: "follow-up answer, remembering the first"}
				}
			}
			return mockmodel.Reply{Text: "follow-up answer without memory"}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \"") || strings.Contains(req.LastUser, "Resume #"):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "LAUNCH":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Memory job", "CHILD first", "general")}}
		case req.LastUser == "RESUME":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "asyncagents_task", Args: map[string]any{"resume": taskID, "prompt": "CHILD follow up"}}}}
		case req.LastUser == "LIST":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "asyncagents_list", Args: map[string]any{}}}}
		}
		return mockmodel.Reply{Text: "?"}
	})
	parent := e.prompt("LAUNCH")
	e.eventually("the first notice", 60*time.Second, func() bool { return len(e.notices(parent)) == 1 })
	e.waitIdle(parent)
	taskID = idOf(e.toolParts(parent, "asyncagents_task")[0])

	e.promptIn(parent, "RESUME")
	e.eventually("the resume notice", 60*time.Second, func() bool { return len(e.notices(parent)) == 2 })
	resume := e.toolParts(parent, "asyncagents_task")[1]
	require.Equal(t, "completed", resume.State.Status, resume.State.Error)
	session := e.sessionOf(taskID)
	require.Contains(t, resume.State.Output, "task_id: "+taskID+"\nsession_id: "+session+"\nagent: general\ndescription: Memory job\nstatus: resumed\nresume: #1\n")
	n := e.notices(parent)[1]
	require.Regexp(t, `^✓ Resume #1 completed in [0-9.]+m?s\.\nTask Progress: 1/1$`, n.visible)
	require.Contains(t, n.hidden, "<task_result>\nfollow-up answer, remembering the first\n</task_result>")
	children, err := e.oc.Children(e.ctx(10*time.Second), parent)
	require.NoError(t, err)
	require.Len(t, children, 1, "the resume ran in the same child session")
	e.waitIdle(parent)

	e.promptIn(parent, "LIST")
	e.eventually("the list", 30*time.Second, func() bool { return finishedParts(e.toolParts(parent, "asyncagents_list")) })
	require.Contains(t, e.toolParts(parent, "asyncagents_list")[0].State.Output, "- "+taskID+" (resumed) | session "+session+" | completed |")
	e.waitIdle(parent)

	// The child session is deleted: a resume is refused with a suggestion.
	require.NoError(t, e.oc.Do(e.ctx(10*time.Second), "DELETE", "/session/"+session, nil, nil))
	e.promptIn(parent, "RESUME")
	e.eventually("the refused resume", 30*time.Second, func() bool {
		parts := e.toolParts(parent, "asyncagents_task")
		return len(parts) == 3 && finishedParts(parts)
	})
	refused := e.toolParts(parent, "asyncagents_task")[2]
	require.Equal(t, "error", refused.State.Status)
	require.Contains(t, refused.State.Error, "the session of task "+taskID+" no longer exists")
	require.Contains(t, refused.State.Error, "start a new task with asyncagents_task")
}
