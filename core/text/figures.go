package text

import (
	"fmt"
	"strings"
)

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

// CountOf writes n with its noun, which agrees with it: "1 background task", "3 background tasks".
// Every count the core writes goes through it.
func CountOf[N ~int | ~int64](n N, one, many string) string {
	if n == 1 || n == -1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// LineCounts is a changed file's lines added and removed ("+3 −1"), or "binary" for a file git
// counts no lines of (it reports -1).
func LineCounts(added, removed int) string {
	if added < 0 || removed < 0 {
		return "binary"
	}
	return fmt.Sprintf("+%d −%d", added, removed)
}
