package core

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/view"
	"github.com/stretchr/testify/require"
)

// The launch answer, the list, the output, the notice, `ls` and the TUI row name the worker of a
// remote task; a local task's texts are as before.
func TestTextsNameTheWorker(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	h.state("w1", true, "")
	r, _ := h.launchOn("remote one", "w1")
	require.Contains(t, r.Output, "worker: w1\nagent: general")
	tk := h.taskOf(r)
	local, _ := h.launchOn("local one", "")
	require.NotContains(t, local.Output, "worker")

	list := ofKind(h.run(Event{Type: EventToolCall, CallID: "call_l", Tool: ToolList, SessionID: "ses_p", Args: json.RawMessage(`{}`)}), EffectToolReply)[0].Output
	require.Contains(t, list, `"remote one" | @general on worker w1 |`)
	require.Contains(t, list, `"local one" | @general |`)
	out := ofKind(h.run(Event{Type: EventToolCall, CallID: "call_o", Tool: ToolOutput, SessionID: "ses_p", Args: json.RawMessage(`{"task_id":"` + tk.ID + `"}`)}), EffectToolReply)[0].Output
	require.Contains(t, out, "worker: w1\n")

	eff := h.answerOn("w1", tk.SessionID, "all done")
	eff = append(eff, h.from("", "session.idle", `{"sessionID":"ses_p"}`)...)
	var notice string
	for _, p := range ofKind(h.effects, EffectPromptAsync) {
		if p.Notice {
			for _, part := range p.Parts {
				notice += part.Text + "\n"
			}
		}
	}
	require.Contains(t, notice, `finished in`)
	require.Contains(t, notice, ` on worker w1.`)
	require.Contains(t, notice, "worker: w1\n")
	for _, p := range ofKind(h.effects, EffectPromptAsync) {
		if p.Notice {
			require.Empty(t, p.Worker, "a notice goes to the local parent")
			require.Nil(t, p.Remote)
		}
	}
	_ = eff

	table := TasksTable(h.m.Tasks(), h.now)
	require.True(t, strings.HasPrefix(strings.Split(table, "\n")[0], "TASK ID"))
	require.Contains(t, strings.Split(table, "\n")[0], "WORKER")
	require.Contains(t, table, "w1")
	require.Equal(t, "general on worker w1", view.MakeRow(&tk.Task, h.now, view.Opts{}).Detail[:len("general on worker w1")])
	require.Equal(t, "w1", view.TaskOf(&tk.Task, h.now).Worker)
}
