package conformance_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/abi"
	"github.com/asyncagents/asyncagents/core/conformance"
)

// TestNative plays every case against the core compiled natively. host/ plays the same cases
// through the .wasm under wazero, and bridge/ through the .wasm under Bun.
func TestNative(t *testing.T) {
	cases, err := conformance.Cases()
	require.NoError(t, err)
	require.NotEmpty(t, cases)
	for _, c := range cases {
		t.Run(c.File, func(t *testing.T) {
			rt := abi.NewRuntime()
			require.NoError(t, conformance.Run(c, func(req []byte) ([]byte, error) { return rt.Call(req), nil }))
		})
	}
}
