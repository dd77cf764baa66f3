package ocserve

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// pluginPackage is the dependency OpenCode insists on in every config dir.
const pluginPackage = "@opencode-ai/plugin"

// seedConfigDir makes dir look already installed to OpenCode, so it never
// runs npm there. At start OpenCode checks each config dir
// (~/.config/opencode, every .opencode, ~/.opencode): when node_modules is
// missing, or package.json names a dependency that package-lock.json's root
// package lacks, it reifies with npm (network, seconds), and loading any
// plugin waits for that. We write both files to agree and symlink
// @opencode-ai/plugin and its dependency closure from the repository's
// node_modules (symlinks: effect alone is 47 MB).
func seedConfigDir(dir, repoRoot string) error {
	lock, err := readLock(filepath.Join(repoRoot, "package-lock.json"))
	if err != nil {
		return err
	}
	version := lock[pluginPackage].Version
	if version == "" {
		return fmt.Errorf("%s not in %s/package-lock.json: run npm ci", pluginPackage, repoRoot)
	}
	closure := dependencyClosure(lock, pluginPackage)
	packages := map[string]any{"": map[string]any{"dependencies": map[string]string{pluginPackage: version}}}
	for _, name := range closure {
		src := filepath.Join(repoRoot, "node_modules", name)
		if !fileExists(src) {
			continue // optional or platform-specific dependency not installed
		}
		dst := filepath.Join(dir, "node_modules", name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.Symlink(src, dst); err != nil && !os.IsExist(err) {
			return err
		}
		entry := map[string]any{"version": lock[name].Version}
		if len(lock[name].Dependencies) > 0 {
			entry["dependencies"] = lock[name].Dependencies
		}
		packages["node_modules/"+name] = entry
	}
	pkg := map[string]any{"dependencies": map[string]string{pluginPackage: version}}
	lockFile := map[string]any{"name": filepath.Base(dir), "lockfileVersion": 3, "requires": true, "packages": packages}
	if err := writeJSON(filepath.Join(dir, "package.json"), pkg); err != nil {
		return err
	}
	return writeJSON(filepath.Join(dir, "package-lock.json"), lockFile)
}

type lockEntry struct {
	Version      string            `json:"version"`
	Dependencies map[string]string `json:"dependencies"`
}

// readLock indexes a v3 package-lock.json by package name (top-level
// node_modules entries only: nested copies do not matter for resolution here).
func readLock(path string) (map[string]lockEntry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w (run npm ci)", path, err)
	}
	var l struct {
		Packages map[string]lockEntry `json:"packages"`
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	out := map[string]lockEntry{}
	for k, v := range l.Packages {
		name, ok := strings.CutPrefix(k, "node_modules/")
		if ok && !strings.Contains(name, "/node_modules/") {
			out[name] = v
		}
	}
	return out, nil
}

// dependencyClosure is root and everything it depends on, sorted.
func dependencyClosure(lock map[string]lockEntry, root string) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(name string) {
		if seen[name] {
			return
		}
		if _, ok := lock[name]; !ok {
			return
		}
		seen[name] = true
		for dep := range lock[name].Dependencies {
			walk(dep)
		}
	}
	walk(root)
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
