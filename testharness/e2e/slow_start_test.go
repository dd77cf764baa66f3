package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// slowStartPlugin holds OpenCode's handling of a prompt that says "SLOW START" for 12 s before
// the session's turn begins, as a loaded machine or a worker's instance still starting holds a
// child's first prompt: the session reads idle, with no answer begun, well past the 5 s after
// which a prompt counts as dropped (core/prompt_dropped.go).
const slowStartPlugin = `export const SlowStart = async () => ({
  "chat.message": async (_input, output) => {
    const text = (output.parts ?? []).map((p) => p.text ?? "").join(" ");
    if (text.includes("SLOW START")) await new Promise((r) => setTimeout(r, 12000));
  },
});
`

// A child whose first prompt is slow to start is not sent it again: a first turn joins no earlier
// turn's end, so nothing could have dropped it. It used to get the task's prompt twice, three
// times at most, each one more user message in its context (seen on fresh workers under load).
func TestAChildSlowToStartGetsItsPromptOnce(t *testing.T) {
	slow := filepath.Join(t.TempDir(), "slow-start.js")
	require.NoError(t, os.WriteFile(slow, []byte(slowStartPlugin), 0o644))
	script := childScript(map[string]func(mockmodel.Request) mockmodel.Reply{
		"CHILD SLOW START": func(mockmodel.Request) mockmodel.Reply { return mockmodel.Reply{Text: "started late"} },
	}, map[string][]mockmodel.ToolCall{"LAUNCH": {taskCall("slow", "CHILD SLOW START", "general")}})
	model := mockmodel.Start(t, script)
	e := &env{t: t, model: model, oc: ocserve.Start(t, ocserve.Options{ModelURL: model.URL(),
		Plugins: []string{ocserve.PluginSpec(t), "file://" + slow}})}
	parent := e.prompt("LAUNCH")
	id := e.launchedTasks(parent, 1)[0]
	e.eventually("the task's notice", 90*time.Second, func() bool { return e.noticeOf(parent, id) != "" })

	tk, _ := findStoredTask(e.oc, id)
	require.Equal(t, task.StatusCompleted, tk.Status, "%+v", tk.Error)
	require.Equal(t, "started late", tk.Result)
	prompts := 0
	for _, m := range e.messages(e.sessionOf(id)) {
		if m.Info.Role == "user" {
			prompts++
		}
	}
	require.Equal(t, 1, prompts, "the child got the task's prompt once")
	require.NotContains(t, e.oc.Logs(), "sending it again")
	for _, r := range e.model.Requests() {
		if firstUser(r) == "CHILD SLOW START" {
			require.Equal(t, 1, strings.Count(strings.Join(userTexts(r), "\n"), "CHILD SLOW START"), "the model read the prompt once")
		}
	}
	require.Equal(t, 1, e.noticesOf(parent, id), "the parent told once")
}

// userTexts are the user messages of a model request.
func userTexts(r mockmodel.Request) []string {
	var out []string
	for _, m := range r.Messages {
		if m.Role == "user" {
			out = append(out, m.Content)
		}
	}
	return out
}
