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

type build struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

var plain, traps build

// Build returns the path of a freshly built module, failing tb if the build fails.
func Build(tb testing.TB) string {
	tb.Helper()
	return plain.get(tb, "")
}

// BuildTestTraps returns the path of a module built with the testtraps tag: one whose tool calls
// can be made to trap (wasm/testtraps.go). The shipped module cannot.
func BuildTestTraps(tb testing.TB) string {
	tb.Helper()
	return traps.get(tb, "testtraps")
}

func (b *build) get(tb testing.TB, tags string) string {
	tb.Helper()
	b.once.Do(func() {
		var root []byte
		root, b.err = exec.Command("go", "env", "GOMOD").Output()
		if b.err != nil {
			return
		}
		dir, _ := os.MkdirTemp("", "asyncagents-wasm-")
		b.path = filepath.Join(dir, "asyncagents.wasm")
		cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-tags", tags, "-o", b.path, "./wasm")
		cmd.Dir = filepath.Dir(strings.TrimSpace(string(root)))
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
		b.out, b.err = cmd.CombinedOutput()
	})
	if b.err != nil {
		tb.Fatalf("building the core module: %v\n%s", b.err, b.out)
	}
	return b.path
}
