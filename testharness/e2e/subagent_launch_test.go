package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// A task's child runs OpenCode's own task tool, and that subagent launches in the background: the
// task it launches is nested in the child's task. Its ⏸ line reaches the user's session, and it
// counts its depth from that task (maxDepth).

// subagentLaunches is the mock for a lead task whose child runs a subagent ("SUB lead") that
// launches "Deep asker" in the background; the asker's bash asks. Each answers with what its tools
// returned, so the lead's result carries the subagent's launch.
func subagentLaunches(req mockmodel.Request) mockmodel.Reply {
	switch {
	case firstUser(req) == "CHILD deep" && lastRole(req) == "user":
		return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "bash", Args: map[string]any{"command": "echo deep-ran", "description": "asks"}}}}
	case firstUser(req) == "SUB lead" && lastRole(req) == "user":
		return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Deep asker", "CHILD deep", "general")}}
	case firstUser(req) == "CHILD lead" && lastRole(req) == "user":
		return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "task", Args: map[string]any{"description": "sub lead", "prompt": "SUB lead", "subagent_type": "orchestrator"}}}}
	case firstUser(req) == "CHILD deep", firstUser(req) == "SUB lead", firstUser(req) == "CHILD lead":
		return mockmodel.Reply{Text: "tools said: " + toolOutputs(req)}
	case req.LastUser == "SUBNEST" && lastRole(req) == "user":
		return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Lead", "CHILD lead", "orchestrator")}}
	}
	return mockmodel.Reply{Text: "ok"}
}

// startSubagentLaunches serves subagentLaunches with tasks nesting maxDepth deep.
func startSubagentLaunches(t *testing.T, maxDepth int) (*env, serverJSON) {
	return startServing(t, subagentLaunches, ocserve.Options{
		Config: map[string]any{
			"plugin": []any{ocserve.PluginSpec(t)},
			// OpenCode's own limit (1 by default) counts a task's child as a subagent already.
			"subagent_depth": 4,
			"agent": map[string]any{
				"general":      map[string]any{"permission": map[string]any{"bash": "ask"}},
				"orchestrator": map[string]any{"mode": "subagent", "description": "splits work", "permission": map[string]any{"task": "allow"}},
			},
		},
		Files: map[string]string{".opencode/asyncagents.json": fmt.Sprintf(`{"maxDepth": %d}`, maxDepth)},
	})
}

func TestATaskASubagentBelowAChildLaunchedAsksTheUser(t *testing.T) {
	e, sj := startSubagentLaunches(t, 2)
	parent := e.prompt("SUBNEST")
	e.eventually("the ⏸ line in the user's session", 90*time.Second, func() bool {
		for _, m := range e.messages(parent) {
			for _, p := range m.Parts {
				if strings.HasPrefix(p.Text, `⏸ Agent "Deep asker" waits for permission: bash echo deep-ran`) {
					return true
				}
			}
		}
		return false
	})
	var deep task.Task
	e.eventually("the nested task waiting in the API", 30*time.Second, func() bool {
		code, body := apiGet(t, sj.URL+"/v1/tasks?search=Deep", sj.Token, "")
		var page struct {
			Tasks []task.Task `json:"tasks"`
		}
		if code != 200 || json.Unmarshal([]byte(body), &page) != nil || len(page.Tasks) != 1 {
			return false
		}
		deep = page.Tasks[0]
		return deep.WaitingPermission() != nil
	})
	require.Equal(t, 2, deep.Depth, "nested in the lead's task")
	code, body := answerPermission(t, sj, deep.ID, fmt.Sprintf(`{"requestId":%q,"reply":"once"}`, deep.WaitingPermission().ID))
	require.Equal(t, 202, code, body)
	e.eventually("the nested task's end", 60*time.Second, func() bool {
		tk, _ := findStoredTask(e.oc, deep.ID)
		return tk.Status.Terminal()
	})
	require.Contains(t, storedTask(t, e.oc, deep.ID).Result, "deep-ran")
}

func TestASubagentBelowAChildCannotLaunchPastMaxDepth(t *testing.T) {
	e, _ := startSubagentLaunches(t, 1)
	parent := e.prompt("SUBNEST")
	var lead string
	e.eventually("the lead's launch", 60*time.Second, func() bool {
		parts := e.toolParts(parent, "asyncagents_task")
		if len(parts) == 0 {
			return false
		}
		lead = idOf(parts[0])
		return lead != ""
	})
	e.eventually("the lead's end", 90*time.Second, func() bool {
		tk, _ := findStoredTask(e.oc, lead)
		return tk.Status.Terminal()
	})
	result := storedTask(t, e.oc, lead).Result
	require.Contains(t, result, "nesting limit reached: this session runs inside a background task 1 level deep, and tasks may nest 1 deep")
	for _, tk := range storedTasks(t, e.oc) {
		require.NotEqual(t, "Deep asker", tk.Description, "no task was created")
	}
}
