package host

import "github.com/tetratelabs/wazero/experimental"

// reserve is set where the system can map address space (memory_mmap.go); nil leaves wazero's
// own memory in place.
var reserve func(capacity, max uint64) experimental.LinearMemory

// sliceMemory is the fallback: a slice grown by doubling, so growth copies O(log n) times.
type sliceMemory struct {
	buf []byte
	max uint64
}

func (m *sliceMemory) Reallocate(size uint64) []byte {
	if size > m.max {
		return nil
	}
	if size > uint64(cap(m.buf)) {
		grown := make([]byte, size, max(size, 2*uint64(cap(m.buf))))
		copy(grown, m.buf)
		m.buf = grown
	}
	m.buf = m.buf[:size]
	return m.buf
}

func (m *sliceMemory) Free() { m.buf = nil }
