package abi

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The state.merge op through the envelope: the model health file as another process left it,
// merged with what this machine holds (restored here), answered as the content to write.
func TestStateMergeOpKeepsAnotherProcesssFigures(t *testing.T) {
	rt := NewRuntime()
	r, err := DecodeResponse(rt.Call([]byte(`{"op":"restore","now":100,"history":"","state":"{\"version\":1,\"models\":{\"p/mine\":{\"failures\":1,\"at\":50}}}"}`)))
	require.NoError(t, err)
	require.True(t, r.OK, r.Error)
	r, err = DecodeResponse(rt.Call([]byte(`{"op":"state.merge","state":"{\"version\":1,\"models\":{\"p/theirs\":{\"failures\":2,\"at\":90}}}"}`)))
	require.NoError(t, err)
	require.True(t, r.OK, r.Error)
	require.Contains(t, r.State, `"p/mine"`)
	require.Contains(t, r.State, `"p/theirs"`)
}
