package core

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/core/view"
	"github.com/stretchr/testify/require"
)

func (h *fbHarness) retry(id string, attempt int, message string, next int64) {
	h.oc("session.status", fmt.Sprintf(`{"sessionID":%q,"status":{"type":"retry","attempt":%d,"message":%q,"next":%d}}`, id, attempt, message, next))
}

func (h *fbHarness) listText() string {
	eff := h.step(Event{Type: EventToolCall, CallID: "list", Tool: ToolList, SessionID: "ses_p", Args: json.RawMessage(`{}`)})
	return ofKind(eff, EffectToolReply)[0].Output
}

// While OpenCode retries the child's model call, the task says so everywhere it is shown: its
// record, its row, its page's view, asyncagents_list and asyncagents_output. The child's next
// activity ends it, and the task's end does too.
func TestARetryIsShownUntilTheChildWorksAgain(t *testing.T) {
	h := newFB(t, config.Config{})
	id := h.launch()
	h.busy(id)
	h.retry(id, 1, "Internal Server Error", h.now+2_000)
	h.retry(id, 3, "HTTP 500: upstream exploded\nwith a stack", h.now+8_000)
	tk, _ := h.m.Task(id)
	require.Equal(t, &task.Retry{Attempt: 3, Message: "HTTP 500: upstream exploded\nwith a stack", Next: h.now + 8_000 - 10}, tk.Retry)
	want := "retrying (attempt 3): HTTP 500: upstream exploded"
	row := view.MakeRow(&tk, h.now, view.Opts{})
	require.Equal(t, want, row.Note)
	require.Equal(t, view.ToneWarning, row.Tone)
	require.Equal(t, want, view.TaskOf(&tk, 0).Retry)
	require.Equal(t, "running", view.TaskOf(&tk, 0).Label)
	require.Contains(t, h.outputText(id), want+", next try in ")
	require.Contains(t, h.listText(), "| running ("+want+", next try in ")

	h.work(id, "msg_1", "prt_1", "now it answers", false)
	tk, _ = h.m.Task(id)
	require.Nil(t, tk.Retry)
	require.Empty(t, view.MakeRow(&tk, h.now, view.Opts{}).Note)
	require.NotContains(t, h.outputText(id), "retrying")

	h.retry(id, 1, "Overloaded", h.now+1_000)
	h.answer(id, "", "done")
	tk, _ = h.m.Task(id)
	require.Equal(t, task.StatusCompleted, tk.Status)
	require.Nil(t, tk.Retry, "an ended task retries nothing")
}

// A retry the fallback loop answers by moving to the next model is no retry to show.
func TestARetryLeftForTheNextModelIsNotShown(t *testing.T) {
	h := newFB(t, chainAB)
	id := h.launch()
	h.busy(id)
	h.retry(id, 1, "Rate limit exceeded", h.now+2_000)
	tk, _ := h.m.Task(id)
	require.Nil(t, tk.Retry)
}

// A long provider error is cut in the row, which has one line for it.
func TestARetrysMessageIsCut(t *testing.T) {
	long := ""
	for len(long) < 200 {
		long += "overloaded "
	}
	got := view.Retrying(&task.Retry{Attempt: 2, Message: long})
	require.LessOrEqual(t, len([]rune(got)), len("retrying (attempt 2): ")+80)
	require.Equal(t, "retrying (attempt 2)", view.Retrying(&task.Retry{Attempt: 2}))
}
