package host

import (
	"context"

	"github.com/tetratelabs/wazero/experimental"
)

// The core's linear memory grows as the Go runtime inside it asks, a few megabytes at a time.
// wazero's default backing is a Go slice, which is copied whole on each growth: restoring
// 10,000 tasks (about 100 MB of memory) spent most of its second copying. Where the system
// allows, the whole range is reserved up front instead (memory_mmap.go), so growing costs
// nothing and pages are only used once touched.

// withMemory returns ctx carrying the memory allocator instantiation should use.
func withMemory(ctx context.Context) context.Context {
	if reserve == nil {
		return ctx
	}
	return experimental.WithMemoryAllocator(ctx, experimental.MemoryAllocatorFunc(reserve))
}
