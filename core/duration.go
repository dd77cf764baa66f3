package core

import "fmt"

// FormatDuration renders milliseconds the way notices show them: "850ms", "4.2s", "37s",
// "2m 5s", "1h 3m".
func FormatDuration(ms int64) string {
	switch {
	case ms < 0:
		ms = 0
		fallthrough
	case ms < 1000:
		return fmt.Sprintf("%dms", ms)
	case ms < 10_000:
		return fmt.Sprintf("%d.%ds", ms/1000, (ms%1000)/100)
	case ms < 60_000:
		return fmt.Sprintf("%ds", ms/1000)
	case ms < 3_600_000:
		return fmt.Sprintf("%dm %ds", ms/60_000, (ms%60_000)/1000)
	default:
		return fmt.Sprintf("%dh %dm", ms/3_600_000, (ms%3_600_000)/60_000)
	}
}
