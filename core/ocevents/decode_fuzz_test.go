package ocevents

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The hand decoders read the real shapes of the hot events themselves: a change that sends them
// to encoding/json every time (a key mistyped) fails here, not only in a benchmark.
func TestDecodeFastReadsRealEvents(t *testing.T) {
	for _, c := range realCases {
		got, ok := decodeFast(c.typ, []byte(c.props))
		require.True(t, ok, "left to encoding/json: %s %s", c.typ, c.props)
		require.NotNil(t, got, "%s %s", c.typ, c.props)
	}
}

// Every case decodes to what encoding/json alone gives, deeply equal (nil and empty apart).
func TestDecodeMatchesEncodingJSON(t *testing.T) {
	for _, c := range append(append([]decodeCase{}, realCases...), edgeCases...) {
		requireSameDecode(t, c.typ, []byte(c.props))
	}
	// A nesting deeper than the reader follows is left to encoding/json, which gives its own
	// answer (an error past its depth of 10,000).
	for _, depth := range []int{900, 2000, 10001} {
		deep := `{"part":{"metadata":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}}`
		requireSameDecode(t, "message.part.updated", []byte(deep))
	}
}

// FuzzDecodeMatchesEncodingJSON: for any bytes and every subscribed type, Decode gives what
// encoding/json gives.
func FuzzDecodeMatchesEncodingJSON(f *testing.F) {
	types := Subscribed()
	for _, c := range append(append([]decodeCase{}, realCases...), edgeCases...) {
		for i, typ := range types {
			if typ == c.typ {
				f.Add(uint8(i), []byte(c.props))
			}
		}
	}
	f.Fuzz(func(t *testing.T, i uint8, props []byte) {
		typ := types[int(i)%len(types)]
		want := decodeStd(typ, props)
		if got := Decode(typ, props); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s %q:\n got %#v\nwant %#v", typ, props, got, want)
		}
	})
}

func requireSameDecode(t *testing.T, typ string, props []byte) {
	t.Helper()
	want := decodeStd(typ, json.RawMessage(props))
	got := Decode(typ, json.RawMessage(props))
	require.True(t, reflect.DeepEqual(got, want), "%s %s:\n got %#v\nwant %#v", typ, props, got, want)
}
