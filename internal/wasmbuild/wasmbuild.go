// Package wasmbuild builds the core's .wasm for Go tests, once per test process, so a test never
// runs against a stale module left in dist/. A package that builds it runs its tests through Main,
// which removes the modules when they end.
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
	dir  string // the temporary folder the module is built in
	path string
	err  error
	out  []byte
}

var (
	plain, traps build
	inMain       bool // the tests run through Main, which removes what they build
)

// Main runs the package's tests (a TestMain calls it), then removes the modules built for them: each
// is built once and shared by all the tests of the process, so no one test's cleanup may remove it.
func Main(m *testing.M) int {
	inMain = true
	code := m.Run()
	for _, b := range []*build{&plain, &traps} {
		if b.dir != "" {
			os.RemoveAll(b.dir)
		}
	}
	return code
}

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
	if !inMain {
		tb.Fatal("wasmbuild: the package's TestMain must call wasmbuild.Main, which removes the built module when the tests end")
	}
	b.once.Do(func() {
		var root []byte
		root, b.err = exec.Command("go", "env", "GOMOD").Output()
		if b.err != nil {
			return
		}
		b.dir, b.err = os.MkdirTemp("", "asyncagents-wasm-")
		if b.err != nil {
			return
		}
		b.path = filepath.Join(b.dir, "asyncagents.wasm")
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
