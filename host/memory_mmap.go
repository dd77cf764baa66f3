//go:build linux || darwin || freebsd

package host

import (
	"syscall"

	"github.com/tetratelabs/wazero/experimental"
)

// reserve maps max bytes of address space (not memory: MAP_NORESERVE, and untouched pages cost
// nothing) and hands out growing prefixes of it. If the mapping fails, a slice-backed memory that
// copies on growth, as wazero's own, takes over.
func init() {
	reserve = func(capacity, max uint64) experimental.LinearMemory {
		b, err := syscall.Mmap(-1, 0, int(max), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON|mapNoReserve)
		if err != nil {
			return &sliceMemory{buf: make([]byte, 0, capacity), max: max}
		}
		return &mappedMemory{buf: b}
	}
}

type mappedMemory struct{ buf []byte }

func (m *mappedMemory) Reallocate(size uint64) []byte {
	if size > uint64(len(m.buf)) {
		return nil
	}
	return m.buf[:size]
}

func (m *mappedMemory) Free() {
	if m.buf != nil {
		_ = syscall.Munmap(m.buf)
		m.buf = nil
	}
}
