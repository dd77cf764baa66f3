package abi

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/httpapi"
)

// initWith starts a runtime on the plugin's own config and the user's options as written.
func initWith(t *testing.T, options string) (*Runtime, Response) {
	r := &Runtime{}
	own := config.Config{API: config.APIConfig{Token: "s3cret"}}
	q, err := json.Marshal(Request{Op: "init", Config: &own, Options: json.RawMessage(options), Seed: "00"})
	require.NoError(t, err)
	resp, err := DecodeResponse(r.Call(q))
	require.NoError(t, err)
	return r, resp
}

func health(t *testing.T, r *Runtime) httpapi.APIHealth {
	q, err := json.Marshal(Request{Op: "http", Now: 1, HTTP: &httpapi.Request{Method: "GET", Path: "/v1/health",
		Headers: map[string]string{"host": "127.0.0.1:5165", "authorization": "Bearer s3cret"}}})
	require.NoError(t, err)
	resp, err := DecodeResponse(r.Call(q))
	require.NoError(t, err)
	require.Equal(t, 200, resp.HTTP.Status, resp.HTTP.Body)
	var h httpapi.APIHealth
	require.NoError(t, json.Unmarshal([]byte(resp.HTTP.Body), &h))
	return h
}

// The plugin options of opencode.json get a config file's checks: a wrong type is named with
// its source and field, the core still loads (the status API answers), and /v1/health says
// degraded with the reason; good options apply, and the plugin's own api is left to it.
func TestPluginOptionsAreCheckedAsAFile(t *testing.T) {
	r, resp := initWith(t, `{"maxResultChars":"big"}`)
	require.True(t, resp.OK, resp.Error)
	require.Equal(t, `asyncagents: opencode.json (the asyncagents plugin's options): maxResultChars: must be a positive integer, got "big"`, resp.ConfigError)
	h := health(t, r)
	require.Equal(t, "degraded", h.Status)
	require.Equal(t, resp.ConfigError, h.ConfigError)

	_, resp = initWith(t, `{"budget":{"dollars":5}}`)
	require.Contains(t, resp.ConfigError, "budget.dollars")

	r, resp = initWith(t, `{"maxResultChars":123,"api":{"maxSubscribers":3},"stall":{"warnAfterMs":0}}`)
	require.Empty(t, resp.ConfigError)
	require.Equal(t, 123, resp.Config.MaxResultChars)
	require.Equal(t, "ok", health(t, r).Status)
}
