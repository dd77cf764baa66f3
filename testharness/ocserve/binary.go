package ocserve

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// BinaryEnv overrides the binary path (e.g. to try another OpenCode build).
const BinaryEnv = "ASYNCAGENTS_OPENCODE_BIN"

// RepoRoot is the nearest directory above the working directory holding
// go.mod and node_modules/opencode-ai: the repository root when tests run.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("ocserve: getwd: %v", err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if fileExists(filepath.Join(d, "go.mod")) && fileExists(filepath.Join(d, "node_modules", "opencode-ai", "package.json")) {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatalf("ocserve: no node_modules/opencode-ai above %s: run npm ci in the repository root", dir)
		}
	}
}

// Binary is the path of the native binary npm installed for the pinned
// opencode-ai (node_modules/opencode-<os>-<arch>), never one found on PATH,
// so every run tests the OpenCode version we ship against; the opencode-ai
// wrapper script is skipped so signals reach OpenCode itself.
//
// Binary is the path of the pinned native opencode binary. It fails the test
// when npm has not installed it or its version differs from opencode-ai's.
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(BinaryEnv); p != "" {
		return p
	}
	root := RepoRoot(t)
	want := packageVersion(filepath.Join(root, "node_modules", "opencode-ai"))
	var tried []string
	for _, name := range platformPackages() {
		pkg := filepath.Join(root, "node_modules", name)
		bin := filepath.Join(pkg, "bin", "opencode")
		tried = append(tried, bin)
		if !fileExists(bin) {
			continue
		}
		if got := packageVersion(pkg); got != want {
			t.Fatalf("ocserve: %s is version %q but opencode-ai is %q: run npm ci", bin, got, want)
		}
		return bin
	}
	t.Fatalf("ocserve: no opencode binary (tried %s): run npm ci", strings.Join(tried, ", "))
	return ""
}

// platformPackages lists npm's per-platform package names, best first: the
// AVX2 build when the CPU has AVX2, then the baseline build.
func platformPackages() []string {
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	base := "opencode-" + runtime.GOOS + "-" + arch
	names := []string{base, base + "-baseline", base + "-musl", base + "-baseline-musl"}
	if arch == "x64" && runtime.GOOS == "linux" && !cpuHasAVX2() {
		names[0], names[1] = names[1], names[0]
	}
	return names
}

func cpuHasAVX2() bool {
	b, err := os.ReadFile("/proc/cpuinfo")
	return err != nil || strings.Contains(string(b), " avx2")
}

func packageVersion(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return ""
	}
	var p struct{ Version string }
	_ = json.Unmarshal(b, &p)
	return p.Version
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// PluginSpec is the opencode.json "plugin" entry that loads the built asyncagents plugin from
// dist/, as a user of a checkout would write it. It fails t when `make build` has not run.
func PluginSpec(t testing.TB) string {
	t.Helper()
	js := filepath.Join(RepoRoot(t), "dist", "asyncagents.js")
	if _, err := os.Stat(js); err != nil {
		t.Fatalf("%s is missing: run `make build` first (make test does)", js)
	}
	return "file://" + js
}
