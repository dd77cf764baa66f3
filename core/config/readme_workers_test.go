package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// exampleAfter is the first code block of the given fence after heading in a Markdown file.
func exampleAfter(t *testing.T, path, heading, fence string) string {
	t.Helper()
	doc, err := os.ReadFile(path)
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(doc), heading)
	require.True(t, ok, "%s has %q", path, heading)
	_, block, ok := strings.Cut(section, "```"+fence+"\n")
	require.True(t, ok, "%s: a %s example after %q", path, fence, heading)
	example, _, ok := strings.Cut(block, "```")
	require.True(t, ok)
	return example
}

// The workers examples users copy (the README's, and the Kubernetes fleet's, on port-forwarded
// loopback ports) are valid configs that name their workers and place an agent's tasks on them.
func TestReadmeWorkersExamples(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, c := range []struct {
		path, heading, fence string
		workers              []string
	}{
		{filepath.Join(root, "README.md"), "\n## Workers on other machines\n", "jsonc", []string{"w1"}},
		{filepath.Join(root, "deploy", "kubernetes", "README.md"), "\n## Steps\n", "json", []string{"k0", "k1"}},
	} {
		example := exampleAfter(t, c.path, c.heading, c.fence)
		cfg, err := ApplyConfigFiles(Config{}, []ConfigFile{{Path: c.path, Text: example}})
		require.NoError(t, err, c.path)
		require.Equal(t, c.workers, cfg.WorkerNames(), c.path)
		require.Equal(t, WorkerAuto, cfg.Agents["general"].Worker, c.path)
		for _, name := range c.workers {
			require.NotEmpty(t, cfg.Workers[name].PasswordEnv, "%s: %s names its password's variable", c.path, name)
		}
	}
}
