package ocevents

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every subscribed type decodes to its typed value, and an event that does not parse or lacks
// what identifies it decodes to nil, so the machine never acts on half an event.
func TestDecode(t *testing.T) {
	for _, typ := range Subscribed() {
		require.Nil(t, Decode(typ, json.RawMessage(`not json`)), typ)
	}
	require.Nil(t, Decode("message.part.delta", json.RawMessage(`{}`)), "a type the core does not read")
	for _, c := range []struct{ typ, props string }{
		{"session.status", `{"status":{"type":"busy"}}`},
		{"session.error", `{"sessionID":"s"}`},
		{"session.deleted", `{"info":{}}`},
		{"session.compacted", `{}`},
		{"session.created", `{"info":{"id":"s"}}`},
		{"session.updated", `{"info":{"id":"s"}}`},
		{"permission.asked", `{"sessionID":"s"}`},
		{"permission.replied", `{"sessionID":"s"}`},
		{"server.instance.disposed", `{}`},
	} {
		require.Nil(t, Decode(c.typ, json.RawMessage(c.props)), "%s %s", c.typ, c.props)
	}

	st, ok := Decode("session.status", json.RawMessage(`{"sessionID":"s","status":{"type":"retry","message":"429","attempt":2,"next":9}}`)).(SessionStatus)
	require.True(t, ok)
	require.Equal(t, "retry", st.Status.Type)
	require.Equal(t, 2, st.Status.Attempt)
	require.EqualValues(t, 9, st.Status.Next)

	mu, ok := Decode("message.updated", json.RawMessage(`{"info":{"id":"m","sessionID":"s","role":"assistant",
		"error":{"name":"APIError","data":{"message":"rate","statusCode":429}},"tokens":{"input":3,"cache":{"read":4}},"cost":0.5}}`)).(MessageUpdated)
	require.True(t, ok)
	require.Equal(t, "APIError", mu.Info.Error.Name)
	require.Equal(t, 429, mu.Info.Error.Data.StatusCode)
	require.EqualValues(t, 3, mu.Info.Tokens.Input)
	require.EqualValues(t, 4, mu.Info.Tokens.Cache.Read)
	require.Equal(t, 0.5, mu.Info.Cost)

	pa, ok := Decode("permission.asked", json.RawMessage(`{"id":"per","sessionID":"s","permission":"bash","patterns":["ls"]}`)).(PermissionAsked)
	require.True(t, ok)
	require.Equal(t, []string{"ls"}, pa.Patterns)

	// As OpenCode 1.18.33 writes them on /global/event (a PATCH /global/config on a worker).
	d, ok := Decode("server.instance.disposed", json.RawMessage(`{"directory":"/srv/w1/repo"}`)).(InstanceDisposed)
	require.True(t, ok)
	require.Equal(t, "/srv/w1/repo", d.Directory)
	require.IsType(t, GlobalDisposed{}, Decode("global.disposed", json.RawMessage(`{}`)))
}
