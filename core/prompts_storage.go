package core

import "strings"

// --- The history's storage faults (storage_fault.go): what the user and the parent are told. ---

const (
	storageToastTitle = "asyncagents: task history"
	// storageFaultLogFmt and storageFaultToastFmt tell of the first failed write (%s: its error).
	storageFaultLogFmt   = "the task history could not be written (%s): tasks go on, held in memory, and their notices say so; writing is retried until it works"
	storageFaultToastFmt = "The task history could not be written (%s). Tasks go on, held in memory; a restart now would lose what is not written."
	// storageNoticeWarningFmt is the line a notice carries while the fault lasts.
	storageNoticeWarningFmt = "⚠ asyncagents could not write its task history (%s): this result is held in memory only until the disk takes it again."
	// storageHealthFmt is /v1/health's reason while the fault lasts.
	storageHealthFmt = "the task history cannot be written (%s): tasks are held in memory"
	// storageRecoveredFmt (%s: how long the fault lasted) and storageRecoveredToast: it is over.
	storageRecoveredFmt   = "the task history is written again, after %s: everything held in memory is on disk"
	storageRecoveredToast = "The task history is written again: nothing was lost."
)

// tellsOfEnd reports whether a notice's hidden part tells of a task's end (hiddenNotice's first
// line), not of a stall or a permission.
func tellsOfEnd(text string) bool {
	for _, s := range []string{"completed", "error", "cancelled"} {
		if strings.HasPrefix(text, "Background task "+s+".\n") {
			return true
		}
	}
	return false
}
