package text

import (
	"fmt"
	"strings"
)

// Duration writes milliseconds the way notices and tool answers show them: "850ms", "4.2s",
// "37s", "2m 5s", "1h 3m".
func Duration(ms int64) string {
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

// ShortDuration is Duration without a zero last unit: "2m", not "2m 0s"; "6s", not "6.0s". It
// writes a limit the user set (a timeout), which is round.
func ShortDuration(ms int64) string {
	s := strings.TrimSuffix(strings.TrimSuffix(Duration(ms), " 0s"), " 0m")
	if strings.HasSuffix(s, ".0s") {
		s = strings.TrimSuffix(s, ".0s") + "s"
	}
	return s
}

// Silence is how long a task has been silent, in its largest unit: "2m", "45s", "1h 3m". It is
// looked at once a poll, so a finer figure would only tell the poll's timing.
func Silence(ms int64) string {
	switch {
	case ms >= 3_600_000:
		return ShortDuration(ms)
	case ms >= 60_000:
		return fmt.Sprintf("%dm", ms/60_000)
	default:
		return fmt.Sprintf("%ds", max(ms, 0)/1000)
	}
}

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
