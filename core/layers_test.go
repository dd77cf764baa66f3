package core

import (
	"fmt"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const modulePath = "github.com/asyncagents/asyncagents"

// layers is the core's packages from the bottom up (paths under core/, "." for core itself). A
// package may import the module's packages only from layers below its own: the leaves import
// none, and nothing imports upward. A new package under core/ must be given its layer here.
var layers = [][]string{
	{"internal/xxh64", "internal/jsonw", "internal/jsonr", "internal/encodetest", "internal/version", "errclass", "forkctx", "conformance", "text", "worktree"},
	{"ocevents"},
	{"config", "outbox"},
	{"task"},
	{"history", "internal/tasktest", "slots", "budget", "placement"},
	{"view"},
	{"httpapi"},
	{"."},
	{"abi"},
}

// TestLayers reads every package's imports (its own and its in-package tests', not the external
// test packages', which may drive it through the layers above) and fails on an import of the
// module that is not from a lower layer.
func TestLayers(t *testing.T) {
	dirs := map[string]bool{}
	require.NoError(t, filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != "." && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			dirs[filepath.ToSlash(filepath.Dir(p))] = true
		}
		return nil
	}))
	imports := map[string][]string{}
	for dir := range dirs {
		pkg, err := build.ImportDir(dir, 0)
		if _, ok := err.(*build.NoGoError); ok {
			continue
		}
		require.NoError(t, err, dir)
		imports[importPath(dir)] = append(pkg.Imports, pkg.TestImports...)
	}
	require.Contains(t, imports, importPath("."))
	require.Contains(t, imports, importPath("errclass"))
	require.Empty(t, layerViolations(imports))
}

// TestDocListsEveryLayer: doc.go's chart names every package of the layers, so a reader finds
// each one there.
func TestDocListsEveryLayer(t *testing.T) {
	b, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	doc := string(b)
	for _, l := range layers {
		for _, p := range l {
			if p != "." {
				require.Regexp(t, `\b`+regexp.QuoteMeta(p)+`\b`, doc, "doc.go does not name %s", p)
			}
		}
	}
}

// TestLayersCatchesAnUpwardImport: the check itself reports a leaf that imports the machine, a
// package given no layer, and an import of the module from outside the layers.
func TestLayersCatchesAnUpwardImport(t *testing.T) {
	got := layerViolations(map[string][]string{
		importPath("errclass"): {"strings", importPath(".")},
		importPath("."):        {importPath("errclass"), modulePath + "/host"},
		importPath("nowhere"):  nil,
	})
	require.Len(t, got, 3, "%q", got)
	require.Contains(t, got[0]+got[1]+got[2], "errclass (layer 0) imports")
}

// layerViolations lists, in a stable order, every package of imports that has no layer and every
// import of the module that is not from a layer below the importer's.
func layerViolations(imports map[string][]string) []string {
	layerOf := map[string]int{}
	for i, l := range layers {
		for _, p := range l {
			layerOf[importPath(p)] = i
		}
	}
	pkgs := make([]string, 0, len(imports))
	for p := range imports {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	var out []string
	for _, self := range pkgs {
		own, ok := layerOf[self]
		if !ok {
			out = append(out, fmt.Sprintf("%s has no layer in core/layers_test.go", short(self)))
			continue
		}
		for _, imp := range imports[self] {
			if imp == self || (imp != modulePath && !strings.HasPrefix(imp, modulePath+"/")) {
				continue
			}
			l, ok := layerOf[imp]
			switch {
			case !ok:
				out = append(out, fmt.Sprintf("%s imports %s, which is not one of the core's layers", short(self), short(imp)))
			case l >= own:
				out = append(out, fmt.Sprintf("%s (layer %d) imports %s (layer %d): a package imports only from layers below its own", short(self), own, short(imp), l))
			}
		}
	}
	return out
}

func short(p string) string { return strings.TrimPrefix(p, modulePath+"/") }

func importPath(dir string) string {
	if dir == "." {
		return modulePath + "/core"
	}
	return modulePath + "/core/" + dir
}
