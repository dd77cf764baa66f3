package view

import "fmt"

// The texts the terminal UI shows, with the other user-facing strings of the core.

const (
	SectionTitle    = "Background tasks"
	SectionEmpty    = "No background tasks in this session"
	ListTitle       = "Background tasks"
	ListPlaceholder = "Filter by description or agent"
	ListEmpty       = "No background tasks in this project"
	CancelKey       = "ctrl+d"
	CancelHint      = "enter: open its session · ctrl+d: cancel it"
	noteOverBudget  = "over budget"
)

func noteStalled(since string) string { return "stalled for " + since }

func noteQueued(position int, limit string, maxAtOnce int) string {
	return fmt.Sprintf("queued #%d for %s (%d at once)", position, limit, maxAtOnce)
}

func moreFinished(n int) string {
	if n == 1 {
		return "+1 more finished"
	}
	return fmt.Sprintf("+%d more finished", n)
}

func cancelPrompt(description string) string {
	return fmt.Sprintf("Cancel %q? Its child session is aborted and its parent is told.", description)
}
