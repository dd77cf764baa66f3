package core

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A partial text is cut to a number of characters, not bytes: a multi-byte text no longer than
// the limit in bytes is whole, and one longer is cut at a character's boundary.
func TestCutRunes(t *testing.T) {
	for _, c := range []struct {
		s     string
		limit int
		want  string
	}{
		{"abc", 0, "abc"},
		{"abc", 3, "abc"},
		{"abcd", 3, "abc"},
		{"été", 3, "été"}, // 5 bytes, 3 characters
		{"étés", 3, "été"},
		{"日本語の", 2, "日本"},
		{"", 2, ""},
	} {
		require.Equal(t, c.want, cutRunes(c.s, c.limit), "cutRunes(%q, %d)", c.s, c.limit)
	}
}
