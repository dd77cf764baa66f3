package ocserve

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The seeded dir must pass OpenCode's own "needs install?" check: a
// node_modules dir, and every package.json dependency (plus
// @opencode-ai/plugin) listed in package-lock.json's root package.
func TestSeedConfigDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".opencode")
	require.NoError(t, seedConfigDir(dir, RepoRoot(t)))

	var pkg struct{ Dependencies map[string]string }
	readJSON(t, filepath.Join(dir, "package.json"), &pkg)
	var lock struct {
		Packages map[string]struct {
			Version      string
			Dependencies map[string]string
		}
	}
	readJSON(t, filepath.Join(dir, "package-lock.json"), &lock)

	version := pkg.Dependencies[pluginPackage]
	require.NotEmpty(t, version)
	assert.Equal(t, pkg.Dependencies, lock.Packages[""].Dependencies)
	assert.Equal(t, version, lock.Packages["node_modules/"+pluginPackage].Version)

	for _, name := range []string{pluginPackage, "@opencode-ai/sdk", "zod", "effect"} {
		var p struct{ Name string }
		readJSON(t, filepath.Join(dir, "node_modules", name, "package.json"), &p)
		assert.Equal(t, name, p.Name)
		assert.Contains(t, lock.Packages, "node_modules/"+name)
	}
}

func TestDependencyClosure(t *testing.T) {
	lock := map[string]lockEntry{
		"a": {Dependencies: map[string]string{"b": "1", "missing": "1"}},
		"b": {Dependencies: map[string]string{"a": "1", "c": "1"}},
		"c": {},
		"d": {},
	}
	assert.Equal(t, []string{"a", "b", "c"}, dependencyClosure(lock, "a"))
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, v), path)
}
