package e2e

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
)

// The parent launches three tasks in one turn (parallel tool calls); all three complete; the
// parent gets three notices with the spec's exact visible text and the result in the hidden part;
// asyncagents_output then returns each child's result.
func TestFanOutThree(t *testing.T) {
	results := map[string]string{"alpha": "alpha result: 42", "beta": "beta result: 7", "gamma": "gamma result: 1000"}
	delays := map[string]time.Duration{"alpha": 300 * time.Millisecond, "beta": 900 * time.Millisecond, "gamma": 1500 * time.Millisecond}
	e := start(t, func(req mockmodel.Request) mockmodel.Reply {
		if strings.HasPrefix(req.LastUser, "CHILD ") {
			name := strings.TrimPrefix(req.LastUser, "CHILD ")
			return mockmodel.Reply{Text: results[name], Delay: delays[name]}
		}
		if strings.HasPrefix(firstUser(req), "COLLECT") {
			if lastRole(req) == "tool" {
				return mockmodel.Reply{Text: "collected"}
			}
			return mockmodel.Reply{Text: "nothing to collect"}
		}
		if lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \"") {
			return mockmodel.Reply{Text: "waiting"}
		}
		if strings.HasPrefix(req.LastUser, "FANOUT") {
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{
				taskCall("Task alpha", "CHILD alpha", "general"),
				taskCall("Task beta", "CHILD beta", "general"),
				taskCall("Task gamma", "CHILD gamma", "general"),
			}}
		}
		return mockmodel.Reply{Text: "?"}
	})
	parent := e.prompt("FANOUT please")

	e.eventually("three notices in the parent", 60*time.Second, func() bool { return len(e.notices(parent)) == 3 })

	// Under `opencode serve` the server is the plugin's own: launches and notices go to it directly.
	require.Contains(t, e.oc.Logs(), "asyncagents: launches and notices go straight to OpenCode's server at http://127.0.0.1:")

	// The launches: one child session per task, under the parent, titled as the spec says.
	launches := e.toolParts(parent, "asyncagents_task")
	require.Len(t, launches, 3)
	children, err := e.oc.Children(e.ctx(10*time.Second), parent)
	require.NoError(t, err)
	require.Len(t, children, 3)
	titles := map[string]string{}
	for _, c := range children {
		titles[c.ID] = c.Title
	}
	ids := map[string]string{}      // description -> task ID
	sessions := map[string]string{} // description -> child session ID
	for _, p := range launches {
		require.Equal(t, "completed", p.State.Status, p.State.Error)
		first := strings.SplitN(p.State.Output, "\n", 2)[0]
		id := strings.TrimPrefix(first, "task_id: ")
		require.Regexp(t, `^bg_[0-9a-f]{22}$`, id, "the task ID is the core's own, whole")
		desc := p.State.Input["description"].(string)
		session := e.sessionOf(id)
		require.Contains(t, titles, session, "the task's session is a child of the parent")
		require.Equal(t, desc+" (@general subagent)", titles[session])
		require.Contains(t, p.State.Output, "\nagent: general\ndescription: "+desc+"\nstatus: running\n")
		ids[desc], sessions[desc] = id, session
	}

	// The notices: exact visible text, progress 1/3, 2/3, 3/3 once each, result in the hidden part.
	visible := regexp.MustCompile(`^✓ Agent "Task (alpha|beta|gamma)" finished in [0-9.]+m?s\.\nTask Progress: ([123])/3$`)
	var progress []string
	for _, n := range e.notices(parent) {
		m := visible.FindStringSubmatch(n.visible)
		require.NotNil(t, m, "visible notice %q", n.visible)
		progress = append(progress, m[2])
		name := m[1]
		require.Contains(t, n.hidden, "task_id: "+ids["Task "+name]+"\nsession_id: "+sessions["Task "+name]+"\n")
		require.Contains(t, n.hidden, "<task_result>\n"+results[name]+"\n</task_result>")
	}
	sort.Strings(progress)
	require.Equal(t, []string{"1", "2", "3"}, progress)
	last := e.notices(parent)[2]
	require.Contains(t, last.hidden, "All 3 tasks finished.")

	// The children could not delegate, touch the todo list, ask the user, or call our tools:
	// those tools were not even offered to their model.
	childRequests := 0
	for _, r := range e.model.Requests() {
		if !strings.HasPrefix(r.LastUser, "CHILD ") {
			continue
		}
		childRequests++
		require.NotEmpty(t, r.Tools)
		for _, denied := range []string{"task", "todowrite", "question", "asyncagents_task", "asyncagents_output"} {
			require.NotContains(t, r.Tools, denied, "tool offered to a child")
		}
	}
	require.Equal(t, 3, childRequests)

	// asyncagents_output returns each child's result.
	e.model.SetScript(func(req mockmodel.Request) mockmodel.Reply {
		if lastRole(req) == "tool" {
			return mockmodel.Reply{Text: "collected"}
		}
		var calls []mockmodel.ToolCall
		for _, id := range []string{ids["Task alpha"], ids["Task beta"], ids["Task gamma"]} {
			calls = append(calls, mockmodel.ToolCall{Name: "asyncagents_output", Args: map[string]any{"task_id": id}})
		}
		return mockmodel.Reply{ToolCalls: calls}
	})
	collector := e.prompt("COLLECT")
	e.eventually("three output calls answered", 30*time.Second, func() bool {
		parts := e.toolParts(collector, "asyncagents_output")
		return len(parts) == 3 && finishedParts(parts)
	})
	for i, p := range e.toolParts(collector, "asyncagents_output") {
		name := []string{"alpha", "beta", "gamma"}[i]
		require.Equal(t, "completed", p.State.Status, p.State.Error)
		require.Contains(t, p.State.Output, fmt.Sprintf("task_id: %s\nsession_id: %s\nagent: general\ndescription: Task %s\nstatus: completed\n", ids["Task "+name], sessions["Task "+name], name))
		require.Contains(t, p.State.Output, "<task_result>\n"+results[name]+"\n</task_result>")
	}
}
