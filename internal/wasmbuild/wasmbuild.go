// Package wasmbuild builds the core's .wasm for Go tests, once per test process, so a test never
// runs against a stale module left in dist/.
package wasmbuild

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	once sync.Once
	path string
	err  error
	out  []byte
)

// Build returns the path of a freshly built module, failing tb if the build fails.
func Build(tb testing.TB) string {
	tb.Helper()
	once.Do(func() {
		var root []byte
		root, err = exec.Command("go", "env", "GOMOD").Output()
		if err != nil {
			return
		}
		dir, _ := os.MkdirTemp("", "asyncagents-wasm-")
		path = filepath.Join(dir, "asyncagents.wasm")
		cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-o", path, "./wasm")
		cmd.Dir = filepath.Dir(strings.TrimSpace(string(root)))
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
		out, err = cmd.CombinedOutput()
	})
	if err != nil {
		tb.Fatalf("building the core module: %v\n%s", err, out)
	}
	return path
}
