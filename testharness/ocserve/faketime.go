package ocserve

import (
	"os"
	"path/filepath"
	"testing"
)

// FaketimeLib is where `make test` puts libfaketime (Debian's package, pinned in the Makefile),
// relative to the repository's root.
const FaketimeLib = ".cache/faketime/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"

// ClockOff is the environment that sets a process's wall clock off by offset (libfaketime's
// FAKETIME, "-60s" for a minute behind): a worker whose machine's clock is not the parent's. The
// test fails, naming how to get it, when the library is not there.
func ClockOff(t testing.TB, offset string) []string {
	t.Helper()
	lib := filepath.Join(RepoRoot(t), FaketimeLib)
	if _, err := os.Stat(lib); err != nil {
		t.Fatalf("ocserve: %s is missing (make test fetches it): %v", FaketimeLib, err)
	}
	// DONT_FAKE_MONOTONIC keeps timers and timeouts on the real pace: only the wall clock is off.
	return []string{"LD_PRELOAD=" + lib, "FAKETIME=" + offset, "DONT_FAKE_MONOTONIC=1"}
}
