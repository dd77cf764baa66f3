package abi

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

// stepRequests are step envelopes as the hosts send them (JSON.stringify's order and spacing,
// every kind of event), which the hand reader must read itself.
var stepRequests = []string{
	`{"op":"step","now":1764200000123,"event":{"type":"opencode","worker":"w1","events":[{"type":"session.status","properties":{"sessionID":"ses_c1","status":{"type":"busy"}}},{"type":"message.part.updated","properties":{"part":{"id":"prt_1","sessionID":"ses_c1","messageID":"msg_1","type":"text","text":"a\nb"}}}]}}`,
	`{"op":"step","now":5,"event":{"type":"opencode","event":{"type":"session.idle","properties":{"sessionID":"ses_p"}}}}`,
	`{"op":"step","now":5,"event":{"type":"effect.done","effectID":12,"ok":true,"result":{"id":"ses_child0"}}}`,
	`{"op":"step","now":5,"event":{"type":"effect.done","effectID":13,"ok":false,"error":"HTTP 500: boom"}}`,
	`{"op":"step","now":5,"event":{"type":"tool.call","callID":"call_1","tool":"asyncagents_task","sessionID":"ses_p","messageID":"msg_p","agent":"build","args":{"description":"t","prompt":"work","agent":"general"}}}`,
	`{"op":"step","now":5,"event":{"type":"tool.aborted","callID":"call_1"}}`,
	`{"op":"step","now":5,"event":{"type":"timer.fired","timerID":"heartbeat"}}`,
	`{"op":"step","now":5,"event":{"type":"worker.state","worker":"w2","up":false,"error":"HTTP 401"}}`,
	`{"op":"step","now":5,"event":{"type":"api.streams","open":2}}`,
	`{"op":"step","now":5,"event":{"type":"start"}}`,
}

// requestEdges are what encoding/json decides in its own way; the hand reader gives the same or
// leaves them to it.
var requestEdges = []string{
	`{"op":"tasks"}`,
	`{"op":"init","now":1,"config":{}}`,
	`{"op":"step","now":5}`,
	`{"op":"step","now":5,"event":null}`,
	`{"op":"step","now":5,"event":{"type":"start"},"event":{"worker":"w"}}`,
	`{"op":"step","now":5,"event":{"type":"opencode","events":[]}}`,
	`{"op":"step","now":5,"event":{"type":"opencode","events":null}}`,
	`{"op":"step","now":5,"event":{"type":"opencode","events":[null,{"type":"x"}]}}`,
	`{"op":"step","now":5,"event":{"type":"opencode","events":[{"type":"a"}],"events":[{}]}}`,
	`{"op":"step","now":5,"event":{"type":"opencode","events":[{"type":"a"},]}}`,
	`{"op":"step","now":5,"event":{"type":"opencode","events":[,]}}`,
	`{"op":"step","now":5,"event":{"type":"opencode","events":{}}}`,
	`{"op":"step","now":5,"event":{"type":"opencode","event":{"type":"a","properties":null,"extra":[1]}}}`,
	`{"op":"step","now":5,"event":{"type":"opencode","event":{"type":"a","properties":  {"x": 1} }}}`,
	`{"op":"step","now":5,"event":{"type":"opencode","event":{"type":"a"},"event":{"properties":[]}}}`,
	`{"op":"step","now":5,"event":{"Type":"start"}}`,
	`{"op":"step","now":5,"event":{"type":"start","unknown":{"a":[true]}}}`,
	`{"OP":"step","now":5,"event":{"type":"start"}}`,
	`{"op":"step","now":5.5,"event":{"type":"start"}}`,
	`{"op":"step","now":"5","event":{"type":"start"}}`,
	`{"op":"step","now":5,"event":{"type":"effect.done","ok":"true"}}`,
	`{"op":"step","now":5,"event":{"type":"effect.done","args":nul}}`,
	`{"op":"step","now":5,"event":{"type":"effect.done"}} {}`,
	`{"op":"step","now":5,"event":{"type":"effect.done"}`,
	`[]`,
	``,
}

func TestDecodeRequestReadsStepsByHand(t *testing.T) {
	for _, req := range stepRequests {
		_, ok := readStepRequest([]byte(req))
		require.True(t, ok, "left to encoding/json: %s", req)
	}
}

func TestDecodeRequestMatchesEncodingJSON(t *testing.T) {
	for _, req := range append(append([]string{}, stepRequests...), requestEdges...) {
		requireSameRequest(t, []byte(req))
	}
}

// FuzzDecodeRequestMatchesEncodingJSON: for any bytes, decodeRequest gives what encoding/json
// gives, its error included.
func FuzzDecodeRequestMatchesEncodingJSON(f *testing.F) {
	for _, req := range append(append([]string{}, stepRequests...), requestEdges...) {
		f.Add([]byte(req))
	}
	f.Fuzz(func(t *testing.T, req []byte) {
		var want Request
		wantErr := json.Unmarshal(req, &want)
		got, err := decodeRequest(req)
		if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Fatalf("%q: error %v, want %v", req, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n got %#v\nwant %#v", req, got, want)
		}
	})
}

func requireSameRequest(t *testing.T, req []byte) {
	t.Helper()
	var want Request
	wantErr := json.Unmarshal(req, &want)
	got, err := decodeRequest(req)
	if wantErr != nil {
		require.EqualError(t, err, wantErr.Error(), "%s", req)
		return
	}
	require.NoError(t, err, "%s", req)
	require.True(t, reflect.DeepEqual(got, want), "%s:\n got %#v\nwant %#v", req, got, want)
}
