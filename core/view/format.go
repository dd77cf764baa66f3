package view

import (
	"fmt"
	"strings"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/core/text"
)

// Usage is a task's spend for a column: the cost when OpenCode priced the model, else the
// tokens ("12.3k tok"), else "" (OpenCode reported none yet).
func Usage(t *task.Task) string {
	tok, cost := t.Usage()
	switch {
	case cost != 0:
		return text.Cost(cost)
	case tok.Total() > 0:
		return text.Count(tok.Total()) + " tok"
	}
	return ""
}

// summary is the count beside the prompt.
func summary(running, queued int) string {
	var parts []string
	if running > 0 {
		parts = append(parts, fmt.Sprintf("%d running", running))
	}
	if queued > 0 {
		parts = append(parts, fmt.Sprintf("%d queued", queued))
	}
	return strings.Join(parts, " · ")
}
