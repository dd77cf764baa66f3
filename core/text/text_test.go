package text

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDuration(t *testing.T) {
	for ms, want := range map[int64]string{-5: "0ms", 850: "850ms", 4_250: "4.2s", 37_000: "37s", 125_000: "2m 5s",
		3_780_000: "1h 3m"} {
		require.Equal(t, want, Duration(ms), "%d ms", ms)
	}
}

func TestShortDuration(t *testing.T) {
	for ms, want := range map[int64]string{120_000: "2m", 6_000: "6s", 3_600_000: "1h", 125_000: "2m 5s"} {
		require.Equal(t, want, ShortDuration(ms), "%d ms", ms)
	}
}

func TestSilence(t *testing.T) {
	for ms, want := range map[int64]string{-1: "0s", 45_500: "45s", 150_000: "2m", 3_780_000: "1h 3m", 7_200_000: "2h"} {
		require.Equal(t, want, Silence(ms), "%d ms", ms)
	}
}

func TestElapsed(t *testing.T) {
	for _, c := range []struct {
		ms   int64
		want string
	}{
		{-5, "0s"}, {0, "0s"}, {999, "0s"}, {9_900, "9s"}, {42_000, "42s"}, {59_999, "59s"},
		{60_000, "1m00s"}, {125_000, "2m05s"}, {3_599_000, "59m59s"}, {3_600_000, "1h00m"}, {3_780_000, "1h03m"},
		{100 * 3_600_000, "100h00m"},
	} {
		require.Equal(t, c.want, Elapsed(c.ms), "%d ms", c.ms)
	}
}

func TestAgo(t *testing.T) {
	for ms, want := range map[int64]string{-1: "0s", 59_999: "59s", 60_000: "1m", 3_599_999: "59m", 3_600_000: "1h", 86_400_000: "1d"} {
		require.Equal(t, want, Ago(ms))
	}
}

func TestCountAndCost(t *testing.T) {
	for n, want := range map[int64]string{950: "950", 1000: "1k", 12_345: "12.3k", 4_100_000: "4.1M"} {
		require.Equal(t, want, Count(n))
	}
	require.Equal(t, "$0.0004", Cost(0.00042))
	require.Equal(t, "$0.25", Cost(0.25))
}

// A count agrees with its noun: one of it, or several, or none.
func TestCountOf(t *testing.T) {
	require.Equal(t, "1 background task", CountOf(1, "background task", "background tasks"))
	require.Equal(t, "0 background tasks", CountOf(0, "background task", "background tasks"))
	require.Equal(t, "3 steps", CountOf(int64(3), "step", "steps"))
}

func TestLineCounts(t *testing.T) {
	require.Equal(t, "+3 −1", LineCounts(3, 1))
	require.Equal(t, "+0 −7", LineCounts(0, 7))
	require.Equal(t, "binary", LineCounts(-1, -1))
}
