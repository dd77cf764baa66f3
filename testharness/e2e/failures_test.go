package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
)

// A child whose model call fails ends as `error`, keeping the provider's message, and the parent
// gets the ✗ notice.
func TestTaskModelErrorEndsAsError(t *testing.T) {
	const providerMsg = "model exploded: the request was invalid"
	e := start(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD fail":
			// A 400 that OpenCode does not retry (it retries 429 and 5xx five times).
			return mockmodel.Reply{Status: 400, ErrorBody: `{"error":{"message":"` + providerMsg + `","type":"invalid_request_error"}}`}
		case strings.HasPrefix(firstUser(req), "COLLECT") && lastRole(req) != "tool":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "asyncagents_output", Args: map[string]any{"task_id": strings.TrimPrefix(firstUser(req), "COLLECT ")}}}}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "noted"}
		case req.LastUser == "LAUNCH":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Doomed job", "CHILD fail", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	})
	parent := e.prompt("LAUNCH")
	e.eventually("the failure notice", 60*time.Second, func() bool { return len(e.notices(parent)) == 1 })

	n := e.notices(parent)[0]
	require.Regexp(t, regexp.MustCompile(`^✗ Agent "Doomed job" failed in [0-9.]+m?s\.\nTask Progress: 1/1$`), n.visible)
	require.Contains(t, n.hidden, "status: error")
	require.Contains(t, n.hidden, providerMsg)

	launch := e.toolParts(parent, "asyncagents_task")
	require.Len(t, launch, 1)
	id := strings.TrimPrefix(strings.SplitN(launch[0].State.Output, "\n", 2)[0], "task_id: ")

	collector := e.prompt("COLLECT " + id)
	e.eventually("the output call", 30*time.Second, func() bool { return finishedParts(e.toolParts(collector, "asyncagents_output")) })
	out := e.toolParts(collector, "asyncagents_output")[0].State.Output
	require.Contains(t, out, "status: error\n")
	require.Contains(t, out, "error_type: APIError")
	require.Contains(t, out, providerMsg)
}

// asyncagents_output(block: true) returns as soon as the child finishes, not at its timeout.
func TestOutputBlockReturnsWhenTaskEnds(t *testing.T) {
	const childDelay = 2 * time.Second
	e := start(t, func(req mockmodel.Request) mockmodel.Reply {
		if req.LastUser == "CHILD slow" {
			return mockmodel.Reply{Text: "slow result", Delay: childDelay}
		}
		if strings.Contains(req.LastUser, "Agent \"") {
			return mockmodel.Reply{Text: "noted"}
		}
		if lastRole(req) == "tool" {
			ids := launchedIDs(req)
			last := req.Messages[len(req.Messages)-1].Content
			if len(ids) == 1 && strings.Contains(last, "status: running") {
				// The launch answered: now wait on it, with a timeout far beyond the child's run.
				return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "asyncagents_output", Args: map[string]any{"task_id": ids[0], "block": true, "timeout": 120}}}}
			}
			return mockmodel.Reply{Text: "got it"}
		}
		if req.LastUser == "BLOCK" {
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Slow job", "CHILD slow", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	})
	parent := e.prompt("BLOCK")
	e.eventually("the blocking output call to return", 60*time.Second, func() bool {
		return finishedParts(e.toolParts(parent, "asyncagents_output"))
	})
	out := e.toolParts(parent, "asyncagents_output")[0]
	require.Equal(t, "completed", out.State.Status, out.State.Error)
	require.Contains(t, out.State.Output, "status: completed")
	require.Contains(t, out.State.Output, "<task_result>\nslow result\n</task_result>")

	// It waited for the child (which took childDelay), and returned when the child ended: far
	// from the 120 s timeout. The child's own completion time is the reference.
	children, err := e.oc.Children(e.ctx(10*time.Second), parent)
	require.NoError(t, err)
	require.Len(t, children, 1)
	var childDone int64
	for _, m := range e.messages(children[0].ID) {
		if m.Info.Role == "assistant" && m.Info.Time.Completed > childDone {
			childDone = m.Info.Time.Completed
		}
	}
	require.NotZero(t, childDone)
	blockedMs := out.State.Time.End - out.State.Time.Start
	require.Greater(t, out.State.Time.End, childDone-1, "the wait ended after the child finished")
	require.Less(t, out.State.Time.End-childDone, int64(10_000), "the wait ended within seconds of the child finishing, not at the timeout (blocked %d ms)", blockedMs)
}

// Bad arguments get errors that name what is wrong, and no task (no child session) is created.
func TestBadInputCreatesNothing(t *testing.T) {
	e := start(t, func(req mockmodel.Request) mockmodel.Reply {
		if lastRole(req) == "tool" {
			return mockmodel.Reply{Text: "understood"}
		}
		if req.LastUser == "BAD" {
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{
				taskCall("Unknown", "CHILD x", "nope"),
				taskCall("Primary", "CHILD x", "build"),
				taskCall("", "CHILD x", "general"),
				taskCall("No prompt", "  ", "general"),
				{Name: "asyncagents_task", Args: map[string]any{"resume": "ses_x", "fork": true, "prompt": "p"}},
				{Name: "asyncagents_task", Args: map[string]any{"resume": "ses_doesnotexist", "prompt": "p"}},
				{Name: "asyncagents_output", Args: map[string]any{"task_id": "ses_doesnotexist"}},
				{Name: "asyncagents_cancel", Args: map[string]any{}},
				{Name: "asyncagents_cancel", Args: map[string]any{"task_id": "ses_doesnotexist"}},
			}}
		}
		return mockmodel.Reply{Text: "?"}
	})
	parent := e.prompt("BAD")
	e.eventually("nine tool calls answered", 60*time.Second, func() bool {
		return len(e.toolParts(parent, "asyncagents_task")) == 6 && finishedParts(e.toolParts(parent, "asyncagents_task")) &&
			finishedParts(e.toolParts(parent, "asyncagents_output")) && len(e.toolParts(parent, "asyncagents_cancel")) == 2 &&
			finishedParts(e.toolParts(parent, "asyncagents_cancel"))
	})
	want := []string{
		`asyncagents_task: unknown agent "nope"; available agents: explore, general. No task was created.`,
		`asyncagents_task: agent "build" is a primary agent and cannot run as a background subagent; available agents: explore, general. No task was created.`,
		`asyncagents_task: argument description is missing or empty; no task was created`,
		`asyncagents_task: argument prompt is missing or empty; no task was created`,
		`asyncagents_task: fork and resume are mutually exclusive`,
		`asyncagents_task: no background task has task_id "ses_doesnotexist" to resume`,
	}
	for i, p := range e.toolParts(parent, "asyncagents_task") {
		require.Equal(t, "error", p.State.Status)
		require.Contains(t, p.State.Error, want[i])
	}
	out := e.toolParts(parent, "asyncagents_output")[0]
	require.Equal(t, "error", out.State.Status)
	require.Contains(t, out.State.Error, `no background task has task_id "ses_doesnotexist"`)
	cancels := e.toolParts(parent, "asyncagents_cancel")
	require.Equal(t, "error", cancels[0].State.Status)
	require.Contains(t, cancels[0].State.Error, "asyncagents_cancel: give task_id, or all: true")
	require.Equal(t, "error", cancels[1].State.Status)
	require.Contains(t, cancels[1].State.Error, `asyncagents_cancel: no background task has task_id "ses_doesnotexist"`)

	children, err := e.oc.Children(e.ctx(10*time.Second), parent)
	require.NoError(t, err)
	require.Empty(t, children)
}

// A resume whose follow-up fails at the provider ends the task as `error` again, and the parent
// gets a ✗ "Resume #1 failed" notice carrying the provider's message, not a silent stop.
func TestResumeThatFailsNotices(t *testing.T) {
	const providerMsg = "follow-up refused: the request was invalid"
	var taskID string
	e := start(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD first":
			return mockmodel.Reply{Text: "first answer"}
		case req.LastUser == "CHILD follow up":
			// A 400 that OpenCode does not retry.
			return mockmodel.Reply{Status: 400, ErrorBody: `{"error":{"message":"` + providerMsg + `","type":"invalid_request_error"}}`}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \"") || strings.Contains(req.LastUser, "Resume #"):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "LAUNCH":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Resumed job", "CHILD first", "general")}}
		case req.LastUser == "RESUME":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "asyncagents_task", Args: map[string]any{"resume": taskID, "prompt": "CHILD follow up"}}}}
		}
		return mockmodel.Reply{Text: "?"}
	})
	parent := e.prompt("LAUNCH")
	e.eventually("the first notice", 60*time.Second, func() bool { return len(e.notices(parent)) == 1 })
	e.waitIdle(parent)
	taskID = idOf(e.toolParts(parent, "asyncagents_task")[0])

	e.promptIn(parent, "RESUME")
	e.eventually("the failed resume's notice", 60*time.Second, func() bool { return len(e.notices(parent)) == 2 })
	n := e.notices(parent)[1]
	require.Regexp(t, regexp.MustCompile(`^✗ Resume #1 failed in [0-9.]+m?s\.\nTask Progress: 1/1$`), n.visible)
	require.Contains(t, n.hidden, "status: error")
	require.Contains(t, n.hidden, providerMsg)
	stored, ok := findStoredTask(e.oc, taskID)
	require.True(t, ok, "the task is in the history")
	require.Equal(t, task.StatusError, stored.Status)
	require.Equal(t, 1, stored.ResumeCount)
}
