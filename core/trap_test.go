package core

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A first trap restarts the core: the message says the call was lost, and the trap is kept for
// the next restart to count.
func TestRecoverFromOneTrap(t *testing.T) {
	r := Recover([]Trap{{At: 10_000, Error: "wasm error: out of bounds\nmemory access"}})
	require.False(t, r.Halt)
	require.Contains(t, r.Message, "(wasm error: out of bounds memory access)")
	require.Contains(t, r.Message, "this call was lost")
	require.Equal(t, []Trap{{At: 10_000, Error: "wasm error: out of bounds\nmemory access"}}, r.Traps)
	require.Nil(t, Recover(nil), "an init without traps is no restart")
}

// Three traps within a minute are a loop: the core says stop, with the last trap's words.
func TestRecoverStopsAtTheThirdTrapInAMinute(t *testing.T) {
	r := Recover([]Trap{{At: 1_000, Error: "a"}, {At: 30_000, Error: "b"}, {At: 60_999, Error: "c"}})
	require.True(t, r.Halt)
	require.Contains(t, r.Message, "asyncagents stopped: its core failed 3 times within a minute (last: c)")
	require.Empty(t, r.Traps)
}

// Traps a minute or more apart are no loop, and the old ones are not kept.
func TestRecoverForgetsTrapsOlderThanAMinute(t *testing.T) {
	r := Recover([]Trap{{At: 1_000, Error: "a"}, {At: 30_000, Error: "b"}, {At: 61_000, Error: "c"}})
	require.False(t, r.Halt)
	require.Equal(t, []Trap{{At: 30_000, Error: "b"}, {At: 61_000, Error: "c"}}, r.Traps)
}

// The runtime's crash report can be long: the message and what is kept are bounded, cut on a
// character's boundary.
func TestRecoverBoundsTheTrapText(t *testing.T) {
	long := strings.Repeat("é", 400)
	r := Recover([]Trap{{At: 1, Error: long}})
	require.Less(t, len(r.Message), 600)
	require.Less(t, len(r.Traps[0].Error), 310)
	require.True(t, strings.HasSuffix(r.Traps[0].Error, "é…"))
}
