package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// `opencode run` (one message, headless) with the plugin loaded ends when its answer is given:
// the plugin's Worker and its status API server do not keep it alive, and with
// headless.waitForTasks off neither does a background task launched in that turn and still
// running (TestOpenCodeRunCollectsItsTasks waits for them, the default).
func TestOpenCodeRunExits(t *testing.T) {
	model := mockmodel.Start(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD slow":
			return mockmodel.Reply{Text: "late", Delay: 20 * time.Second}
		case lastRole(req) == "tool":
			return mockmodel.Reply{Text: "launched and done"}
		case req.LastUser == "LAUNCH":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Slow job", "CHILD slow", "general")}}
		}
		return mockmodel.Reply{Text: "plain answer"}
	})
	for _, c := range []struct{ message, want string }{{"HELLO", "plain answer"}, {"LAUNCH", "launched and done"}} {
		t.Run(c.message, func(t *testing.T) {
			out, took, err := ocserve.Run(t, ocserve.Options{ModelURL: model.URL(), Config: map[string]any{
				"plugin": []any{[]any{ocserve.PluginSpec(t), map[string]any{"headless": map[string]any{"waitForTasks": false}}}},
			}}, 90*time.Second, c.message)
			require.NoError(t, err, "opencode run did not end by itself (%s):\n%s", took, out)
			require.Contains(t, out, c.want)
			t.Logf("opencode run %s ended after %s", c.message, took.Round(time.Millisecond))
			if c.message == "LAUNCH" {
				require.NotContains(t, out, "plain answer", "no turn after the launch's: the run did not wait for the task")
				require.True(t, strings.Contains(out, "asyncagents_task") || strings.Contains(out, "Slow job"), "the task was launched:\n%s", out)
			}
		})
	}
}
