package core

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

// After a restart, a budget stop (its session's cost, or its own steps) does not end a restored
// task whose child's messages are still being read: it may have finished while OpenCode was down.
// Its read keeps an answer finished meanwhile; one still at work is stopped then, as the stop
// would have stopped it live: it fails for the budget and tells its parent, unless it lies below a
// lead the budget stopped, with which it is cancelled, quietly (the lead's notice tells of it).
func TestABudgetStopLeavesARestoredTaskToItsReconcile(t *testing.T) {
	cfg := config.Config{Budget: config.BudgetConfig{SessionCostUsd: 0.5, Steps: 1}}
	cases := []struct {
		name string
		// spend passes a budget; it returns the task left to its read and that task's
		// child, whose read answers.
		spend func(h *fbHarness, lead, n, c, nc string, reads map[string]Effect) (left, read string)
		// stopped checks the task left, found still at work at its read; eff: that read's effects.
		stopped func(h *fbHarness, left, c string, eff []Effect)
	}{
		{"a task below the lead the budget stopped", func(h *fbHarness, lead, n, c, nc string, reads map[string]Effect) (string, string) {
			h.step(Event{Type: EventEffectDone, EffectID: reads[c].ID, OK: true, Result: json.RawMessage(`[]`)})
			h.spent(c, "msg_l", 10, 0.6, "tool-calls")
			require.Equal(h.t, task.StatusError, h.status(lead))
			return n, nc
		}, func(h *fbHarness, n, c string, eff []Effect) {
			require.Equal(h.t, task.StatusCancelled, h.status(n))
			require.Equal(h.t, "its parent task's budget was exceeded", h.m.task(n).CancelReason)
			require.NotEmpty(h.t, ofKind(eff, EffectAbort))
			require.Empty(h.t, prompts(eff, c), "no notice of its own: the lead's tells of it")
		}},
		{"a task past its own steps", func(h *fbHarness, _, n, _, nc string, _ map[string]Effect) (string, string) {
			h.stepDone(nc, "prt_n", "tool-calls")
			return n, nc
		}, func(h *fbHarness, n, c string, eff []Effect) {
			require.Equal(h.t, task.StatusError, h.status(n))
			require.Equal(h.t, "budget exceeded: 1 step (limit 1)", h.m.task(n).Error.Message)
			require.NotEmpty(h.t, ofKind(eff, EffectAbort))
			told := prompts(eff, c)
			require.Len(h.t, told, 1, "its lead's child, at work, is told")
			require.False(h.t, told[0].NoReply)
		}},
		{"a lead", func(h *fbHarness, lead, _, c, _ string, _ map[string]Effect) (string, string) {
			b := h.launchFrom("ses_p", "B")
			h.spent(h.m.task(b).SessionID, "msg_b", 10, 0.6, "tool-calls")
			require.Equal(h.t, task.StatusError, h.status(b))
			return lead, c
		}, func(h *fbHarness, lead, c string, eff []Effect) {
			require.Equal(h.t, task.StatusError, h.status(lead))
			require.Equal(h.t, "BudgetExceeded", h.m.task(lead).Error.Name)
			require.NotEmpty(h.t, ofKind(eff, EffectAbort))
			require.Contains(h.t, h.noticeOf(c), "budget exceeded", "the user's session is told")
		}},
	}
	for _, tc := range cases {
		for _, finished := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s, finished meanwhile %v", tc.name, finished), func(t *testing.T) {
				h, lead, n, c, nc, reads := restoreLeadAndN(t, cfg, func(c, nc string) string {
					if finished {
						return fmt.Sprintf(`{%q:{"type":"busy"}}`, c)
					}
					return fmt.Sprintf(`{%q:{"type":"busy"},%q:{"type":"busy"}}`, c, nc)
				})
				left, read := tc.spend(h, lead, n, c, nc, reads)
				require.Equal(t, task.StatusRunning, h.status(left), "its end is still being read")
				answer := json.RawMessage(`[]`)
				if finished {
					answer = readAnswer(h, `,"finish":"stop"`)
				}
				eff := h.all(func() {
					h.step(Event{Type: EventEffectDone, EffectID: reads[read].ID, OK: true, Result: answer})
					h.idleParent()
				})
				if finished {
					require.Equal(t, task.StatusCompleted, h.status(left))
					require.Equal(t, "result N", h.m.task(left).Result)
					return
				}
				tc.stopped(h, left, c, eff)
			})
		}
	}
}
