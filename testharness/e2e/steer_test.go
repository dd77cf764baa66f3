package e2e

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// A child mid-turn (its tool still running) gets a message from its parent: its next model
// request ends with that message, and the task completes with the answer to it, with one notice
// and no cancel.
func TestMessageSteersARunningChild(t *testing.T) {
	var mu sync.Mutex
	var childLast []string // what each of the child's model requests ended with
	e := start(t, func(req mockmodel.Request) mockmodel.Reply {
		if firstUser(req) == "CHILD steer" {
			last := req.Messages[len(req.Messages)-1]
			mu.Lock()
			childLast = append(childLast, last.Role+": "+last.Content)
			mu.Unlock()
			return steeredChild(req)
		}
		switch {
		case req.LastUser == "GO" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Steered", "CHILD steer", "general")}}
		case req.LastUser == "NUDGE" && lastRole(req) == "user":
			ids := launchedIDs(req)
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "asyncagents_message", Args: map[string]any{"task_id": ids[0], "message": "ALSO CHECK THE README"}}}}
		}
		return mockmodel.Reply{Text: "ok"}
	})
	parent := e.prompt("GO")
	e.eventually("the launch", 60*time.Second, func() bool { return finishedParts(e.toolParts(parent, "asyncagents_task")) })
	id := idOf(e.toolParts(parent, "asyncagents_task")[0])
	child := e.sessionOf(id)
	e.eventually("the child's tool at work", 30*time.Second, func() bool { return shellAtWork(e.messages(child)) })
	e.waitIdle(parent)
	e.promptIn(parent, "NUDGE")
	e.eventually("the message sent", 30*time.Second, func() bool {
		return finishedParts(e.toolParts(parent, "asyncagents_message"))
	})
	require.Contains(t, e.toolParts(parent, "asyncagents_message")[0].State.Output, "Message sent to task "+id, "%+v", e.toolParts(parent, "asyncagents_message")[0].State)

	e.eventually("the notice", 90*time.Second, func() bool { return len(e.notices(parent)) == 1 })
	n := e.notices(parent)[0]
	require.Contains(t, n.visible, `✓ Agent "Steered" finished`)
	require.Contains(t, n.hidden, "the README is checked too")
	tk := storedTask(t, e.oc, id)
	require.Equal(t, task.StatusCompleted, tk.Status)
	require.Equal(t, "the README is checked too", tk.Result)
	require.Len(t, tk.Steers, 1)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, "user: ALSO CHECK THE README", childLast[len(childLast)-1], "the child's next request ends with the message")
	mu.Unlock()
	e.waitIdle(parent)
	e.settle(parent) // a second notice would be in the parent before its answer to this
	require.Len(t, e.notices(parent), 1, "one notice")
	mu.Lock()
}

// After POST /session/:id/summarize on a parent with a task still running, the summary request
// carries the task (the compaction hook's context), and the parent's next model request carries
// its ID whatever the summary kept.
func TestCompactionKeepsTheTasks(t *testing.T) {
	var mu sync.Mutex
	var summary, next string
	e := start(t, func(req mockmodel.Request) mockmodel.Reply {
		all := func() string {
			var b strings.Builder
			for _, m := range req.Messages {
				b.WriteString(m.Content + "\n")
			}
			return b.String()
		}
		switch {
		case req.LastUser == "CHILD long":
			return mockmodel.Reply{Text: "never", Delay: 5 * time.Minute}
		case strings.Contains(req.LastUser, "<conversation>"), strings.Contains(req.LastUser, "summary"):
			mu.Lock()
			summary = all()
			mu.Unlock()
			return mockmodel.Reply{Text: "The user asked for work. Nothing else matters."} // drops the task ID
		case req.LastUser == "GO" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Long", "CHILD long", "general")}}
		case req.LastUser == "NEXT":
			mu.Lock()
			next = all()
			mu.Unlock()
		}
		return mockmodel.Reply{Text: "ok"}
	})
	parent := e.prompt("GO")
	e.eventually("the launch", 60*time.Second, func() bool { return finishedParts(e.toolParts(parent, "asyncagents_task")) })
	id := idOf(e.toolParts(parent, "asyncagents_task")[0])
	e.waitIdle(parent)
	require.NoError(t, e.oc.Do(e.ctx(60*time.Second), "POST", "/session/"+parent+"/summarize", map[string]any{"providerID": "mock", "modelID": "mock-a"}, nil))
	e.eventually("the compaction's summary request", 60*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return summary != ""
	})
	e.waitIdle(parent)
	e.eventually("the ↻ message", 30*time.Second, func() bool {
		for _, m := range e.messages(parent) {
			for _, p := range m.Parts {
				if strings.HasPrefix(p.Text, "↻ Compacted: 1 background task still running") {
					return true
				}
			}
		}
		return false
	})
	e.promptIn(parent, "NEXT")
	e.eventually("the next turn", 60*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return next != ""
	})
	mu.Lock()
	defer mu.Unlock()
	require.Contains(t, summary, "Background tasks this session launched with asyncagents", "the compaction hook's context reached the summary request")
	require.Regexp(t, `- `+id+` \(session ses_\w+\) @general "Long": running for`, summary)
	require.Contains(t, next, id, "the next turn knows the running task")
}

// steeredChild is the child the steer tests script: a slow shell call, then its first answer, or
// the answer to the message once the message ends its request.
func steeredChild(req mockmodel.Request) mockmodel.Reply {
	switch {
	case req.LastUser == "ALSO CHECK THE README" && lastRole(req) == "user":
		return mockmodel.Reply{Text: "the README is checked too"}
	case lastRole(req) == "user":
		return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "bash", Args: map[string]any{"command": "sleep 15", "description": "slow work"}}}}
	}
	return mockmodel.Reply{Text: "the first answer, which the message made stale"}
}

// shellAtWork reports whether msgs hold a shell call still running.
func shellAtWork(msgs []ocserve.Message) bool {
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Type == "tool" && p.Tool == "bash" && p.State.Status == "running" {
				return true
			}
		}
	}
	return false
}
