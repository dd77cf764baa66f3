package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every generated file in the repository is what the generator writes now: a change to the
// core's types, constants or defaults, or to the option list, fails here until `make generate`
// has been run and its output committed.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	out, err := outputs(root)
	require.NoError(t, err)
	require.Len(t, out, 3)
	for path, want := range out {
		got, err := os.ReadFile(filepath.Join(root, path))
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "%s is stale: run `make generate`", path)
	}
}
