package httpapi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/internal/tasktest"
	"github.com/asyncagents/asyncagents/core/task"
)

// GET /v1/tasks lists without prompts and results, so one long result does not make a long
// list; the task's own answer has both.
func TestTaskListLeavesOutPromptsAndResults(t *testing.T) {
	tasks := tasktest.Tasks()
	big := strings.Repeat("r", 2_000_000)
	tasks[0].Result, tasks[0].Prompt = big, "a long prompt"
	list := ServeTasks(apiGet("/v1/tasks", ""), tasks, tasktest.APIConfig, tasktest.Now)
	require.Equal(t, 200, list.Status)
	require.Less(t, len(list.Body), 100_000, "the list does not carry the 2 MB result")
	var l APITaskList
	require.NoError(t, json.Unmarshal([]byte(list.Body), &l))
	require.Equal(t, len(tasks), len(l.Tasks))
	for _, tk := range l.Tasks {
		require.Empty(t, tk.Prompt)
		require.Empty(t, tk.Result)
	}
	one := ServeTasks(apiGet("/v1/tasks/"+tasks[0].ID, ""), tasks, tasktest.APIConfig, tasktest.Now)
	var got task.Task
	require.NoError(t, json.Unmarshal([]byte(one.Body), &got))
	require.Equal(t, big, got.Result)
	require.Equal(t, "a long prompt", got.Prompt)
}
