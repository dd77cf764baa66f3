package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

var (
	pagedBlock = regexp.MustCompile(`(?s)\n<task_result>\n(.*)\n</task_result>`)
	pagedNext  = regexp.MustCompile(`offset=(\d+)\) for the next part\]$`)
)

// bigResult is a child's answer of about 2 MB, in lines of several lengths, some characters of
// several bytes.
func bigResult() string {
	var b strings.Builder
	for i := 0; b.Len() < 2_000_000; i++ {
		fmt.Fprintf(&b, "line %d: é中 %s\n", i, strings.Repeat("x", i%300))
	}
	return strings.TrimSpace(b.String())
}

// A 2 MB result is read whole through asyncagents_output's parts in real OpenCode: the model
// follows each answer's next offset, no answer is cut by OpenCode ("output was truncated"), and
// the parts joined are the child's answer.
func TestALongResultIsReadInParts(t *testing.T) {
	result := bigResult()
	e, sj := startWithConfig(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case firstUser(req) == "CHILD big":
			return mockmodel.Reply{Text: result}
		case req.LastUser == "GO" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Big answer", "CHILD big", "general")}}
		case strings.HasPrefix(req.LastUser, "READ ") && lastRole(req) == "user":
			var id string
			var offset int
			fmt.Sscanf(req.LastUser, "READ %s %d", &id, &offset)
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "asyncagents_output", Args: map[string]any{"task_id": id, "offset": offset}}}}
		}
		return mockmodel.Reply{Text: "ok"}
	}, map[string]any{"plugin": []any{ocserve.PluginSpec(t)}})
	id := launchOne(e, "GO")
	e.eventually("the task's end", 120*time.Second, func() bool {
		tk, ok := apiTask(t, sj, id)
		return ok && tk.Status.Terminal()
	})
	tk, _ := apiTask(t, sj, id)
	require.Equal(t, task.StatusCompleted, tk.Status, "%+v", tk.Error)
	require.Equal(t, len(result), len(tk.Result), "OpenCode kept the whole answer")
	// The list leaves the result out; the task's own answer (above) has it.
	code, list := apiGet(t, sj.URL+"/v1/tasks", sj.Token, "")
	require.Equal(t, 200, code, list)
	require.Contains(t, list, `"id":"`+id+`"`)
	require.Less(t, len(list), 100_000, "GET /v1/tasks does not carry the 2 MB result")

	// One session per part, as a model with a smaller context than 2 MB would read them: a
	// single conversation holding every part is compacted by OpenCode on the way.
	var whole strings.Builder
	offset, parts := 0, 0
	for {
		parts++
		require.Less(t, parts, 200, "bounded")
		reader := e.prompt(fmt.Sprintf("READ %s %d", id, offset))
		e.waitIdle(reader)
		got := e.toolParts(reader, "asyncagents_output")
		require.Len(t, got, 1)
		p := got[0]
		require.Equal(t, "completed", p.State.Status, "part %d: %s", parts, p.State.Error)
		require.NotContains(t, p.State.Output, "output was truncated", "part %d fits OpenCode's cut", parts)
		m := pagedBlock.FindStringSubmatch(p.State.Output)
		require.NotNil(t, m, "part %d has its block", parts)
		whole.WriteString(m[1])
		n := pagedNext.FindStringSubmatch(p.State.Output)
		if n == nil {
			break
		}
		next, _ := strconv.Atoi(n[1])
		require.Greater(t, next, offset)
		offset = next
	}
	require.Greater(t, parts, 40, "2 MB takes many parts")
	require.Equal(t, result, whole.String(), "the parts joined are the whole result")
}
