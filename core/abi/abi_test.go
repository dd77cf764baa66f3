package abi

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/config"
	"github.com/stretchr/testify/require"
)

// The history may follow the envelope raw, after a NUL byte, and restores as if it were the
// envelope's history field.
func TestEnvelopeCarriesARawHistory(t *testing.T) {
	log := history(4)
	rt := NewRuntime()
	var res Response
	require.NoError(t, json.Unmarshal(rt.Call(append([]byte(`{"op":"restore","now":1}`+"\x00"), log...)), &res))
	require.True(t, res.OK, res.Error)
	require.Equal(t, 4, res.Restore.Restored)
	require.NoError(t, json.Unmarshal(rt.Call([]byte(`{"op":"restore","now":1`+"\x00"+`x`)), &res))
	require.False(t, res.OK)
	require.Contains(t, res.Error, "bad request envelope")
}

// A restore reports that it kept what it allocated (the module skips its collection after it);
// no other call does.
func TestOnlyARestoreKeepsAll(t *testing.T) {
	log := history(2)
	rt := NewRuntime()
	require.False(t, rt.KeptAll())
	rt.Call(append([]byte(`{"op":"restore","now":1}`+"\x00"), log...))
	require.True(t, rt.KeptAll())
	rt.Call([]byte(`{"op":"tasks"}`))
	require.False(t, rt.KeptAll())
	rt.Call([]byte(`{"op":"restore","now":1`))
	require.False(t, rt.KeptAll(), "a restore that never ran kept nothing")
}

// BenchmarkHTTPOp10k is a status API request as a host sends it, envelope and all, over 10,000
// restored tasks: the share of a request's latency that is the core's.
func BenchmarkHTTPOp10k(b *testing.B) {
	r := NewRuntime()
	r.Call([]byte(`{"op":"init","config":{"api":{"token":"x","auth":"token","startedAt":1}}}`))
	r.Call(append([]byte(`{"op":"restore","now":1800000000000}`+"\x00"), history(10_000)...))
	for _, path := range []string{"/v1/health", "/v1/tasks", "/v1/stats"} {
		req := []byte(`{"op":"http","now":1800000000000,"http":{"method":"GET","path":"` + path + `","query":"","headers":{"host":"127.0.0.1:5165","authorization":"Bearer x"},"subscribers":0}}`)
		b.Run(path, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if res, err := DecodeResponse(r.Call(req)); err != nil || res.HTTP == nil || res.HTTP.Status != 200 {
					b.Fatalf("%v %+v", err, res)
				}
			}
		})
	}
}

// TestHTTPBodyTravelsRaw: an http op's body follows the envelope after a NUL byte, and
// DecodeResponse puts it back.
func TestHTTPBodyTravelsRaw(t *testing.T) {
	r := NewRuntime()
	r.Call([]byte(`{"op":"init","config":{"api":{"auth":"none"}}}`))
	raw := r.Call([]byte(`{"op":"http","http":{"method":"GET","path":"/v1/health","headers":{"host":"127.0.0.1"}}}`))
	i := bytes.IndexByte(raw, 0)
	require.Greater(t, i, 0, "no NUL in %q", raw)
	require.Contains(t, string(raw[:i]), `"body":""`, "the body is not in the envelope")
	require.True(t, json.Valid(raw[i+1:]), "body %q", raw[i+1:])
	res, err := DecodeResponse(raw)
	require.NoError(t, err)
	require.Equal(t, string(raw[i+1:]), res.HTTP.Body)
	// Without a body (a 204 preflight) there is no NUL.
	raw = r.Call([]byte(`{"op":"http","http":{"method":"OPTIONS","path":"/v1/tasks","headers":{"host":"127.0.0.1"}}}`))
	require.NotContains(t, string(raw), "\x00")
}

// A restore through the envelope takes the index as the first indexLen bytes after the NUL.
func TestTheEnvelopeCarriesTheIndexBeforeTheHistory(t *testing.T) {
	log := history(299)
	m := core.NewMachine(config.Config{})
	m.Restore(1, log)
	var index string
	for _, e := range m.Step(2, core.Event{Type: core.EventTimer, TimerID: core.HistoryIndexTimer}) {
		if e.Kind == core.EffectHistoryIndex {
			index = e.Content
		}
	}
	require.NotEmpty(t, index)

	call := func(env string, payload string) Response {
		raw := NewRuntime().Call([]byte(env + "\x00" + payload))
		r, err := DecodeResponse(raw)
		require.NoError(t, err)
		return r
	}
	r := call(`{"op":"restore","now":1,"indexLen":`+strconv.Itoa(len(index))+`}`, index+log)
	require.True(t, r.OK, r.Error)
	require.Equal(t, 299, r.Restore.Indexed)
	r = call(`{"op":"restore","now":1,"indexLen":`+strconv.Itoa(len(index)+len(log)+1)+`}`, index+log)
	require.False(t, r.OK)
	require.Contains(t, r.Error, "indexLen")
}
