package view

import (
	"fmt"
	"strings"

	"github.com/asyncagents/asyncagents/core/task"
)

// Elapsed writes a duration for a column, short and of steady width: "0s", "42s", "2m05s",
// "1h03m". A list redrawn each second then does not jump between "9.9s" and "10s".
func Elapsed(ms int64) string {
	s := max(ms, 0) / 1000
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	default:
		return fmt.Sprintf("%dh%02dm", s/3600, (s%3600)/60)
	}
}

// Ago writes how long ago something was, in its largest unit: "12s", "3m", "2h", "4d".
func Ago(ms int64) string {
	s := max(ms, 0) / 1000
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm", s/60)
	case s < 86400:
		return fmt.Sprintf("%dh", s/3600)
	default:
		return fmt.Sprintf("%dd", s/86400)
	}
}

// Usage is a task's spend for a column: the cost when OpenCode priced the model, else the
// tokens ("12.3k tok"), else "" (OpenCode reported none yet).
func Usage(t *task.Task) string {
	tok, cost := t.Usage()
	switch {
	case cost != 0:
		return Cost(cost)
	case tok.Total() > 0:
		return Count(tok.Total()) + " tok"
	}
	return ""
}

// Count writes a token count short: 950, 12.3k, 4.1M.
func Count(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d", n)
	case n < 1_000_000:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1000), ".0") + "k"
	default:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1_000_000), ".0") + "M"
	}
}

// Cost writes a cost in dollars, as OpenCode prices models: cents when there are some, else
// four decimals, so a cheap task is not shown as free.
func Cost(c float64) string {
	if c >= 0.01 || c <= -0.01 {
		return fmt.Sprintf("$%.2f", c)
	}
	return fmt.Sprintf("$%.4f", c)
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
