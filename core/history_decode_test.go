package core

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The core's own records take the fast path, whatever their strings hold.
func TestFastRecordReadsTheCoresOwnLines(t *testing.T) {
	_, log := historyRun(t, 3)
	tricky := &Task{ID: "ses_x", Prompt: "line\nquote\" back\\slash \u2028 tab\t é 😀 <html>&", Result: strings.Repeat("ü", 40),
		Error: &TaskError{Name: "E", Message: "m\"x"}, Progress: Progress{LastTools: []string{"a\"b"}}, Status: StatusError, StartedAt: -5}
	lines := strings.Split(log+historyLine(historyRecord{Task: tricky})+historyLine(historyRecord{Removed: "ses_y"}), "\n")
	fast := 0
	for _, l := range lines {
		if l == "" {
			continue
		}
		_, body, _ := strings.Cut(l, " ")
		got, err := fastRecord(body)
		require.NoError(t, err, body)
		var want historyRecord
		require.NoError(t, json.Unmarshal([]byte(body), &want))
		require.Equal(t, want, got)
		fast++
	}
	require.Greater(t, fast, 10)
}

// FuzzDecodeRecord holds the fast decoder to encoding/json: whatever it accepts, encoding/json
// accepts too and decodes to the same record.
func FuzzDecodeRecord(f *testing.F) {
	_, log := historyRun(f, 1)
	for _, l := range strings.Split(log, "\n") {
		if _, body, ok := strings.Cut(l, " "); ok {
			f.Add(body)
		}
	}
	f.Add(`{"removed":"ses_\u00e9"}`)
	f.Add(`{"task":{"sessionID":"a","startedAt":-0,"isForked":true,"error":null,"progress":{"toolCalls":1,"lastTools":["x"]}}}`)
	f.Add(`{"task":{"sessionID":"a\ud83d\ude00\ud800x","depth":01}}`)
	f.Fuzz(func(t *testing.T, body string) {
		got, err := fastRecord(body)
		if err != nil {
			return
		}
		var want historyRecord
		require.NoError(t, json.Unmarshal([]byte(body), &want), "the fast path accepted what encoding/json refuses: %q", body)
		require.Equal(t, want, got, "%q", body)
	})
}

func BenchmarkDecodeRecord(b *testing.B) {
	line := strings.TrimSuffix(syntheticHistory(1), "\n")
	_, body, _ := strings.Cut(line, " ")
	b.Run("fast", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := fastRecord(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var r historyRecord
			if err := json.Unmarshal([]byte(body), &r); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// validPlain agrees with the byte-at-a-time check on every length and every position of a
// control byte, a non-ASCII rune and an invalid byte.
func TestValidPlainMatchesSlowCheck(t *testing.T) {
	bad := []string{"\x00", "\x1f", "\n", "é", "\xff", "\xe2\x82", "日本", "\x7f", " ", "~"}
	for n := 0; n < 20; n++ {
		base := strings.Repeat("a", n)
		require.Equal(t, validPlainSlow(base), validPlain(base), "%q", base)
		for at := 0; at <= n; at++ {
			for _, b := range bad {
				s := base[:at] + b + base[at:]
				require.Equal(t, validPlainSlow(s), validPlain(s), "%q", s)
			}
		}
	}
}

// plainASCIIPrefix stops exactly at the first quote, backslash, control or non-ASCII byte, at
// every position and length.
func TestPlainASCIIPrefix(t *testing.T) {
	slow := func(s string) int {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
				return i
			}
		}
		return len(s)
	}
	for n := 0; n < 20; n++ {
		base := strings.Repeat("x", n)
		require.Equal(t, n, plainASCIIPrefix(base))
		for at := 0; at <= n; at++ {
			for _, b := range []string{`"`, `\`, "\x00", "\x1f", "\x7f", "é", "\xff", "!", "#", "[", "]", " ", "~"} {
				s := base[:at] + b + base[at:]
				require.Equal(t, slow(s), plainASCIIPrefix(s), "%q", s)
			}
		}
	}
}
