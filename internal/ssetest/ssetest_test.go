package ssetest

import (
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReaderReadsFramesAsTheFormatSays(t *testing.T) {
	r := NewReader(strings.NewReader(": a comment\n\nevent: snapshot\ndata: {\"a\":1}\n\ndata:no space\ndata: two\n\nid: 7\nevent: x\n\n\n\nevent: cut\ndata: off"))
	var got []Frame
	for {
		f, err := r.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		got = append(got, f)
	}
	require.Equal(t, []Frame{{Event: "snapshot", Data: `{"a":1}`}, {Data: "no space\ntwo"}, {Event: "x", ID: "7"}}, got)
}
