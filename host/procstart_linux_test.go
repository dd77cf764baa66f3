package host

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestProcStatStartCountsFromTheCommandsLastParenthesis(t *testing.T) {
	stat := "4242 (a (weird) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 12345 67 18446744073709551615\n"
	require.Equal(t, "987654", procStatStart(stat))
	require.Empty(t, procStatStart("garbage"))
	running, start := ProcStart(os.Getpid())
	require.True(t, running)
	require.NotEmpty(t, start)
}
