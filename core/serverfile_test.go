package core

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A file is its writer's while the pid runs with the start time it recorded; a reused pid (the
// same number, another start) or a pid that is gone makes it stale.
func TestServerFileOwnershipByPIDAndStartTime(t *testing.T) {
	f := ServerFile{Port: 5165, PID: 42, ProcStart: "1234567", Token: "t"}
	require.True(t, f.Live(true, "1234567"))
	require.False(t, f.Live(true, "7654321"), "pid 42 now runs another process")
	require.False(t, f.Live(false, ""), "pid 42 is gone")
	// Where the OS does not tell start times, a running pid is taken for the writer.
	require.True(t, ServerFile{Port: 1, PID: 42}.Live(true, "1234567"))
	require.True(t, f.Live(true, ""))
	require.False(t, ServerFile{PID: 42, ProcStart: "1"}.Live(true, "1"), "no port: nothing to find")
}

func TestServerFileRoundTripAndURL(t *testing.T) {
	f := ServerFile{Port: 5170, PID: 7, ProcStart: "99", StartedAt: "2025-01-01T00:00:00.000Z", URL: "http://127.0.0.1:5170", Token: "abc"}
	got, err := ParseServerFile([]byte(f.Content()))
	require.NoError(t, err)
	require.Equal(t, f, got)
	require.True(t, f.NeedsCode())
	require.Equal(t, "http://127.0.0.1:5170/?code=c0de", f.DashboardURL("c0de"), "a code, never the token")
	require.Equal(t, "http://127.0.0.1:5170/", f.DashboardURL(""))
	f.Auth = "none"
	require.False(t, f.NeedsCode())
}

func TestProcStatStartCountsFromTheCommandsLastParenthesis(t *testing.T) {
	stat := "4242 (a (weird) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 12345 67 18446744073709551615\n"
	require.Equal(t, "987654", ProcStatStart(stat))
	require.Empty(t, ProcStatStart("garbage"))
	require.Empty(t, ProcStatStart("1 (x) S 1 2"))
}
