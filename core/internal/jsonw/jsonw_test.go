package jsonw

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

var awkward = []string{"", "plain", `"quoted" \ back`, "\b\f\n\r\t\x00\x1f\x7f", "<a href='x'>&amp;</a>",
	"é ü 日本 😀", "\u2028\u2029", "bad \xff \xe2\x82 \xed\xa0\x80 end", "\xef\xbf\xbd", "tab\tand \"q\" \u2028 <b>"}

// String writes what json.Marshal writes for a string.
func TestStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range awkward {
		want, err := json.Marshal(s)
		require.NoError(t, err)
		require.Equal(t, string(want), string(String([]byte("x"), s)[1:]), "%q", s)
	}
}

func FuzzStringMatchesEncodingJSON(f *testing.F) {
	for _, s := range awkward {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := String(nil, s); string(got) != string(want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}
