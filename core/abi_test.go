package core

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// The history may follow the envelope raw, after a NUL byte, and restores as if it were the
// envelope's history field.
func TestEnvelopeCarriesARawHistory(t *testing.T) {
	_, log := historyRun(t, 4)
	rt := NewRuntime()
	var res Response
	require.NoError(t, json.Unmarshal(rt.Call(append([]byte(`{"op":"restore","now":1}`+"\x00"), log...)), &res))
	require.True(t, res.OK, res.Error)
	require.Equal(t, 4, res.Restore.Restored)
	require.NoError(t, json.Unmarshal(rt.Call([]byte(`{"op":"restore","now":1`+"\x00"+`x`)), &res))
	require.False(t, res.OK)
	require.Contains(t, res.Error, "bad request envelope")
}
