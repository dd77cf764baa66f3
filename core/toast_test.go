package core

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/stretchr/testify/require"
)

// toastsOf lists the toasts among effects.
func toastsOf(effects []Effect) []Effect { return ofKind(effects, EffectToast) }

// answerToasts has the child answer and returns the toasts shown meanwhile (a task may end on
// its answer's completion, before the idle).
func (h *fbHarness) answerToasts(id, errJSON, text string) []Effect {
	before := len(h.effects)
	h.answer(id, errJSON, text)
	return toastsOf(h.effects[before:])
}

// A task alone in its batch gets its own toast as it ends: its description and its time, or its
// error.
func TestToastForATaskAlone(t *testing.T) {
	h := newFB(t, config.Config{})
	id := h.launch()
	h.busy(id)
	got := h.answerToasts(id, "", "done")
	require.Len(t, got, 1)
	require.Equal(t, ToastSuccess, got[0].Variant)
	require.Equal(t, `Agent "survey" finished`, got[0].Title)
	require.Regexp(t, `^in [0-9.]+m?s$`, got[0].Message)
	require.Zero(t, got[0].ID, "a toast gets no answer and takes no effect ID")

	h = newFB(t, config.Config{})
	id = h.launch()
	h.busy(id)
	got = h.answerToasts(id, badRequest, "")
	require.Len(t, got, 1)
	require.Equal(t, ToastError, got[0].Variant)
	require.Equal(t, `Agent "survey" failed`, got[0].Title)
	require.Contains(t, got[0].Message, "Invalid schema for function 'read'")
}

// A batch shows no toast while some of its tasks run, then one for the whole batch, an error
// toast when one of them failed.
func TestOneToastPerBatch(t *testing.T) {
	h := newFB(t, config.Config{})
	ids := []string{h.launch(), h.launch(), h.launch()}
	for _, id := range ids {
		h.busy(id)
	}
	require.Empty(t, h.answerToasts(ids[0], "", "one"))
	require.Empty(t, h.answerToasts(ids[1], badRequest, ""), "a failure in a running batch waits for the batch")
	got := h.answerToasts(ids[2], "", "three")
	require.Len(t, got, 1)
	require.Equal(t, ToastError, got[0].Variant)
	require.Equal(t, "3 background tasks done", got[0].Title)
	require.Equal(t, "2 completed, 1 failed", got[0].Message)
	require.Len(t, toastsOf(h.effects), 1)
}

// toasts: "errors" shows failures only, "off" nothing.
func TestToastSetting(t *testing.T) {
	for _, c := range []struct {
		setting         string
		success, failed int
	}{{config.ToastsAll, 1, 1}, {config.ToastsErrors, 0, 1}, {config.ToastsOff, 0, 0}} {
		h := newFB(t, config.Config{Toasts: c.setting})
		id := h.launch()
		h.busy(id)
		require.Len(t, h.answerToasts(id, "", "done"), c.success, c.setting)
		h = newFB(t, config.Config{Toasts: c.setting})
		id = h.launch()
		h.busy(id)
		require.Len(t, h.answerToasts(id, badRequest, ""), c.failed, c.setting)
	}
}

// A cancelled task alone in its batch gets an info toast; "errors" leaves it out.
func TestToastForACancel(t *testing.T) {
	for setting, want := range map[string]int{config.ToastsAll: 1, config.ToastsErrors: 0} {
		h := newFB(t, config.Config{Toasts: setting})
		id := h.launch()
		h.busy(id)
		got := toastsOf(h.step(Event{Type: EventToolCall, CallID: "cancel", Tool: ToolCancel, SessionID: "ses_p", Args: json.RawMessage(fmt.Sprintf(`{"task_id":%q}`, id))}))
		require.Len(t, got, want, setting)
		if want > 0 {
			require.Equal(t, ToastInfo, got[0].Variant)
			require.Equal(t, `Agent "survey" cancelled`, got[0].Title)
			require.Regexp(t, `^after [0-9.]+m?s$`, got[0].Message)
		}
	}
}
