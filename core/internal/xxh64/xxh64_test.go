package xxh64

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// XXH64 as the xxHash project defines it (the values are the reference implementation's, as Bun's
// Bun.hash.xxHash64 gives them), on every path through it: under 4, 8 and 32 bytes, whole stripes
// of 32 and what follows them.
func TestXXH64MatchesTheReference(t *testing.T) {
	text := []byte("The quick brown fox jumps over the lazy dog, then naps in the sun: 0123456789 abcdefghij ÄÖÜ")
	for _, c := range []struct {
		n    int
		want uint64
	}{
		{0, 0xef46db3751d8e999}, {1, 0x5b4d6af247a3cf7b}, {3, 0x4108f90b5de14d15}, {4, 0xcdf13a49d263200f},
		{7, 0xc6fce9d72e310949}, {8, 0xd07b38a78a153b0b}, {9, 0x9d1214db001dfc69}, {15, 0x59bf1a33358c7d98},
		{31, 0x3f8d95ab32c127d9}, {32, 0xe2bbc9136629a4ee}, {33, 0x6d92fe2ebab7db31}, {63, 0x0aa399c8a0a19508},
		{64, 0x7c24f011a693c28a}, {65, 0x5f983be8b1709991}, {95, 0xa1a44ca0815f2053},
	} {
		require.Equal(t, c.want, Sum(text[:c.n]), "first %d bytes", c.n)
	}
	require.Equal(t, uint64(0x02a2e85470d6fd96), Sum([]byte("Call me Ishmael. Some years ago--never mind how long precisely-")))
}

// BenchmarkChecksum sums a line the size of a finished task's history record.
func BenchmarkChecksum(b *testing.B) {
	line := []byte(strings.Repeat("Findings line. ", 60))
	b.SetBytes(int64(len(line)))
	for i := 0; i < b.N; i++ {
		Sum(line)
	}
}
