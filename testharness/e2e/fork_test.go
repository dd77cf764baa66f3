package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
)

// fork: true gives the child the parent's conversation, processed: the preamble, User:/Agent:
// labels, a long tool output cut with its length shown. The child is linked to its parent.
func TestForkGivesTheChildTheParentsContext(t *testing.T) {
	e := start(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case strings.HasPrefix(req.LastUser, "CHILD forked"):
			all := ""
			for _, m := range req.Messages {
				all += m.Content + "\n"
			}
			if strings.Contains(all, "User: REMEMBER the code word is PAPAYA") {
				return mockmodel.Reply{Text: "the code word is PAPAYA"}
			}
			return mockmodel.Reply{Text: "no idea"}
		case strings.HasPrefix(firstUser(req), "REMEMBER") && req.LastUser == "FORK" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "asyncagents_task", Args: map[string]any{
				"description": "Forked", "prompt": "CHILD forked: what is the code word?", "agent": "general", "fork": true}}}}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "Noted."}
		case strings.HasPrefix(req.LastUser, "REMEMBER"):
			// A long tool output in the parent's history, which the fork must cut.
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "bash", Args: map[string]any{
				"command": "head -c 5000 /dev/zero | tr '\\0' x", "description": "print 5000 x"}}}}
		}
		return mockmodel.Reply{Text: "?"}
	})
	parent := e.prompt("REMEMBER the code word is PAPAYA")
	e.eventually("the first turn", 60*time.Second, func() bool { return finishedParts(e.toolParts(parent, "bash")) })
	e.waitIdle(parent)
	e.promptIn(parent, "FORK")
	e.eventually("the forked task's notice", 60*time.Second, func() bool { return len(e.notices(parent)) == 1 })
	require.Contains(t, e.notices(parent)[0].hidden, "<task_result>\nthe code word is PAPAYA\n</task_result>")

	children, err := e.oc.Children(e.ctx(10*time.Second), parent)
	require.NoError(t, err)
	require.Len(t, children, 1, "the forked child is a child of the parent")
	msgs := e.messages(children[0].ID)
	require.GreaterOrEqual(t, len(msgs), 3)
	context := msgs[0].Text()
	require.True(t, strings.HasPrefix(context, "You are a background task forked from another session."), context[:min(200, len(context))])
	require.Contains(t, context, "User: REMEMBER the code word is PAPAYA")
	require.Contains(t, context, "[Tool: bash] ")
	require.Contains(t, context, "[Tool result truncated: 5,000 characters, first 1,500 shown (bash, call ID ")
	require.NotContains(t, context, strings.Repeat("x", 1600))
	require.Equal(t, "CHILD forked: what is the code word?", msgs[1].Text())
	// Exactly one model turn for the child: the context was stored without one.
	childTurns := 0
	for _, r := range e.model.Turns() {
		if strings.HasPrefix(r.LastUser, "CHILD forked") {
			childTurns++
		}
	}
	require.Equal(t, 1, childTurns)
}
