package jsonr

import (
	"encoding/binary"
	"testing"
)

// special flags a word exactly when one of its bytes is special, wherever it stands among plain
// bytes (the string scan skips a word it does not flag).
func TestSpecialFindsEveryByteItMust(t *testing.T) {
	for c := range 256 {
		want := c == '"' || c == '\\' || c < 0x20 || c >= 0x80
		for pos := range 8 {
			w := []byte("abcdefgh")
			w[pos] = byte(c)
			if got := special(binary.LittleEndian.Uint64(w)); got != want {
				t.Fatalf("byte %#x at %d: special %v", c, pos, got)
			}
		}
	}
}
