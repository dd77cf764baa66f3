package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/browser"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
)

// The dashboard in a browser against the plugin in a real OpenCode: launches that happen while
// the page is open appear as running, then completed, without a reload (the event stream, a fetch
// stream with the page's credential); a cancel from a task's page ends the task, and its parent
// gets the usual ⊘ notice; a task's page shows the child's conversation, read from OpenCode, its
// tool call included (testharness/browser/live.mjs). The page opens with a one-time code.
func TestDashboardLive(t *testing.T) { dashboardLive(t, "") }

// The same with ASYNCAGENTS_API_AUTH=none: the page opens with no link at all, and its own
// Origin cancels, with no token.
func TestDashboardLiveAuthNone(t *testing.T) { dashboardLive(t, "none") }

func dashboardLive(t *testing.T, auth string) {
	e, sj := startWithAPI(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD live" && lastRole(req) == "tool":
			return mockmodel.Reply{Text: "live answer", Delay: 2 * time.Second}
		case req.LastUser == "CHILD live":
			// A tool call first: the task's page shows it in the child's conversation.
			return mockmodel.Reply{Text: "Looking around first.", ToolCalls: []mockmodel.ToolCall{{Name: "bash", Args: map[string]any{"command": "echo dashboard-probe", "description": "probe"}}}, Delay: 2 * time.Second}
		case req.LastUser == "CHILD long":
			return mockmodel.Reply{Text: "never", Delay: 5 * time.Minute}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "GO":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Live job", "CHILD live", "general"), taskCall("Long job", "CHILD long", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	}, map[string]any{}, "ASYNCAGENTS_API_AUTH="+auth)
	token := sj.Token
	if auth == "none" {
		token = "" // the page gets no link: its address alone
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	var parent string
	browser.Script(t, root, "live.mjs", 4*time.Minute, func(line string) {
		if line == "ready" {
			parent = e.prompt("GO")
		}
	}, "DASH_URL="+sj.URL, "DASH_TOKEN="+token, "DASH_SHOTS="+filepath.Join(root, "dist", "screenshots", "live-auth-"+map[string]string{"": "token"}[auth]+auth))

	// The plugin wrote where the dashboard is, once, without the token.
	logs := e.oc.Logs()
	require.Equal(t, 1, strings.Count(logs, "asyncagents: dashboard at "+sj.URL+"/ (open it with: asyncagents dashboard)"), "the dashboard's URL in OpenCode's log")
	require.NotContains(t, logs, sj.Token)

	e.eventually("the cancelled notice", 30*time.Second, func() bool {
		for _, n := range e.notices(parent) {
			if strings.HasPrefix(n.visible, `⊘ Agent "Long job" cancelled after`) && strings.Contains(n.hidden, "reason: cancelled from the dashboard") {
				return true
			}
		}
		return false
	})
}
