package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
)

// The children of these tests work first (text and a tool call in one reply), then stall or fail
// on their next request.
const (
	halfWork  = "Half the survey: the auth code is in core/auth.go"
	stallLong = 5 * time.Minute // the stalled request's delay: far past every test's end
)

// workThen answers a child: its first request writes text and runs a tool, the next gets then.
func workThen(req mockmodel.Request, then mockmodel.Reply) mockmodel.Reply {
	if lastRole(req) != "tool" {
		return mockmodel.Reply{Text: halfWork, ToolCalls: []mockmodel.ToolCall{{Name: "glob", Args: map[string]any{"pattern": "*.md"}}}}
	}
	return then
}

// userTexts are the parent's user messages' visible texts that start with prefix.
func (e *env) userTexts(parent, prefix string) []string {
	var out []string
	for _, m := range e.messages(parent) {
		if m.Info.Role != "user" {
			continue
		}
		for _, p := range m.Parts {
			if p.Type == "text" && !p.Synthetic && strings.HasPrefix(p.Text, prefix) {
				out = append(out, p.Text)
			}
		}
	}
	return out
}

// parentTurns counts the model requests of the parent session whose first message is first.
func (e *env) parentTurns(first string) int {
	n := 0
	for _, r := range e.model.Requests() {
		if !r.Title && firstUser(r) == first {
			n++
		}
	}
	return n
}

// A stalled child gives its parent exactly one stall notice and no model turn; list says
// stalled and output shows the child's latest text; a cancel after the work carries the work.
func TestStalledChildIsToldOnceAndKeepsItsWork(t *testing.T) {
	e := startWithOptions(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD stall":
			return workThen(req, mockmodel.Reply{Text: "never", Delay: stallLong})
		case firstUser(req) == "LAUNCH" && req.LastUser == "LAUNCH" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Survey", "CHILD stall", "general")}}
		case req.LastUser == "CHECK" && lastRole(req) == "user":
			id := launchedIDs(req)[0]
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{
				{Name: "asyncagents_list", Args: map[string]any{}},
				{Name: "asyncagents_output", Args: map[string]any{"task_id": id}},
			}}
		case req.LastUser == "CANCEL" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "asyncagents_cancel", Args: map[string]any{"task_id": launchedIDs(req)[0]}}}}
		}
		return mockmodel.Reply{Text: "waiting"}
	}, map[string]any{"stall": map[string]any{"warnAfterMs": 3000}, "pollIntervalMs": 500})

	parent := e.prompt("LAUNCH")
	e.eventually("the stall notice", 60*time.Second, func() bool {
		return len(e.userTexts(parent, "⚠")) == 1
	})
	turns := e.parentTurns("LAUNCH")
	stall := e.userTexts(parent, "⚠")[0]
	require.Regexp(t, `^⚠ Agent "Survey" has made no progress for [0-9]+s$`, stall)

	// Past the first reminder (at twice the threshold): still one notice, and no model turn.
	time.Sleep(7 * time.Second)
	require.Len(t, e.userTexts(parent, "⚠"), 1, "one notice per stall")
	require.Equal(t, turns, e.parentTurns("LAUNCH"), "the stall notice cost the parent no model turn")

	e.promptIn(parent, "CHECK")
	e.eventually("list and output answered", 60*time.Second, func() bool {
		return finishedParts(e.toolParts(parent, "asyncagents_list")) && finishedParts(e.toolParts(parent, "asyncagents_output"))
	})
	require.Contains(t, e.toolParts(parent, "asyncagents_list")[0].State.Output, "running (stalled: no progress for")
	out := e.toolParts(parent, "asyncagents_output")[0].State.Output
	require.Contains(t, out, "stalled: no progress for")
	require.Contains(t, out, "<latest_text last_chars=\"500\">\n"+halfWork+"\n</latest_text>")

	e.promptIn(parent, "CANCEL")
	e.eventually("the cancel notice", 60*time.Second, func() bool { return len(e.notices(parent)) == 1 })
	n := e.notices(parent)[0]
	require.Contains(t, n.visible, "⊘")
	require.Contains(t, n.hidden, "<partial_work>")
	require.Contains(t, n.hidden, "- glob")
	require.Contains(t, n.hidden, "latest text (partial):\n"+halfWork)
}

// asyncagents_task's timeout aborts the child and fails the task with its partial work; a
// provider failure after some work carries that work too.
func TestTimeoutAndFailureCarryTheWork(t *testing.T) {
	e := startWithOptions(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD slow":
			return workThen(req, mockmodel.Reply{Text: "never", Delay: stallLong})
		case req.LastUser == "CHILD fail":
			return workThen(req, mockmodel.Reply{Status: 400, ErrorBody: `{"error":{"message":"the request was invalid","type":"invalid_request_error"}}`})
		case req.LastUser == "LAUNCH" && lastRole(req) == "user":
			slow := taskCall("Slow survey", "CHILD slow", "general")
			slow.Args["timeout"] = 6
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{slow, taskCall("Failing survey", "CHILD fail", "general")}}
		}
		return mockmodel.Reply{Text: "noted"}
	}, map[string]any{"stall": map[string]any{"warnAfterMs": 0}, "pollIntervalMs": 500})

	parent := e.prompt("LAUNCH")
	e.eventually("both failure notices", 90*time.Second, func() bool { return len(e.notices(parent)) == 2 })
	var timedOut, failed notice
	for _, n := range e.notices(parent) {
		if strings.Contains(n.visible, "Slow survey") {
			timedOut = n
		} else {
			failed = n
		}
	}
	require.Contains(t, timedOut.visible, "✗")
	require.Contains(t, timedOut.hidden, "error: timed out after 6s")
	require.Contains(t, failed.hidden, "the request was invalid")
	for _, n := range []notice{timedOut, failed} {
		require.Contains(t, n.hidden, "<partial_work>")
		require.Contains(t, n.hidden, "- glob")
		require.Contains(t, n.hidden, "latest text (partial):\n"+halfWork)
	}

	// The timed-out child was aborted: its stalled turn ends with OpenCode's abort error.
	ids := e.toolParts(parent, "asyncagents_task")
	require.Len(t, ids, 2)
	var slowID string
	for _, p := range ids {
		if strings.Contains(p.State.Output, "Slow survey") {
			slowID = strings.TrimPrefix(strings.SplitN(p.State.Output, "\n", 2)[0], "task_id: ")
		}
	}
	child := e.sessionOf(slowID)
	e.eventually("the child's aborted turn", 30*time.Second, func() bool {
		msgs := e.messages(child)
		last := msgs[len(msgs)-1].Info
		return last.Role == "assistant" && last.Error != nil && last.Error.Name == "MessageAbortedError"
	})
	stored, ok := findStoredTask(e.oc, slowID)
	require.True(t, ok)
	require.NotNil(t, stored.Partial, "the partial work is in the task's record")
	require.Equal(t, halfWork, stored.Partial.Text)
	require.Equal(t, "Timeout", stored.Error.Name)
}
