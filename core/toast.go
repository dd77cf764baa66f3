package core

import (
	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

// Toast variants, as OpenCode's TUI names them.
const (
	ToastInfo    = "info"
	ToastSuccess = "success"
	ToastWarning = "warning"
	ToastError   = "error"
)

// Toast is the effect that shows a toast in OpenCode's TUI. It decides nothing: Machine.toast
// applies the user's setting first.
func Toast(variant, title, message string) Effect {
	return Effect{Kind: EffectToast, Variant: variant, Title: title, Message: message}
}

// toast shows a toast if the user's setting lets it through: "errors" passes failures and
// warnings (a stall), "off" nothing.
func (m *Machine) toast(variant, title, message string) {
	switch m.cfg.Toasts {
	case config.ToastsOff:
		return
	case config.ToastsErrors:
		if variant != ToastError && variant != ToastWarning {
			return
		}
	}
	// Like the history's effects it takes no ID: nothing answers it, and the IDs of the effects
	// that need an answer stay as they were without toasts.
	m.out = append(m.out, Toast(variant, title, message))
}

// toastEnding shows the toast for a task that just ended. A task alone in its batch (or a resume)
// gets its own; a batch gets one when its last task ends, so ten tasks finishing one by one show
// a single toast.
func (m *Machine) toastEnding(t *run) {
	if t.ParentSessionID == "" {
		return
	}
	done, total, running := m.batchProgress(t)
	if total <= 1 || t.ResumeCount > 0 {
		variant, title, message := taskToast(t, m.noticeDuration(t))
		m.toast(variant, title, message)
		return
	}
	if running > 0 {
		return
	}
	failed, cancelled := 0, 0
	for _, b := range m.batch(t.BatchID) {
		switch b.Status {
		case task.StatusError:
			failed++
		case task.StatusCancelled:
			cancelled++
		}
	}
	variant, title, message := batchToast(done, failed, cancelled)
	m.toast(variant, title, message)
}
