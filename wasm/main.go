//go:build wasip1

// Command wasm is the core as a WebAssembly module: a reactor (built with -buildmode=c-shared)
// whose exports are the ABI described in ../ABI.md. It holds one abi.Runtime; hosts serialise
// their calls.
package main

import (
	goruntime "runtime"
	"runtime/debug"
	"runtime/metrics"
	"unsafe"

	"github.com/asyncagents/asyncagents/core/abi"
)

func main() {}

var runtime = abi.NewRuntime()

// pinned keeps every buffer handed to the host alive until the host frees it: the Go garbage
// collector does not know the host holds a pointer into it.
var pinned = map[uint32][]byte{}

// testTrap is nil in every module but the one built with the testtraps tag (testtraps.go), the
// hosts' tests of what a trap costs: no request can make the shipped module trap on purpose.
var testTrap func(req []byte)

//go:wasmexport aa_abi_version
func abiVersion() uint32 { return abi.ABIVersion }

// largeRequest is the size from which a request is a history (a restore or a follow): its
// buffer is allocated, and its call runs, with the collector held off. The buffer alone is past
// the heap's goal and would start a collection, which the restore would then wait out before it
// could turn the collector off itself (abi.Runtime's restore), to collect nothing that was
// garbage.
const largeRequest = 1 << 20

// heldGCPercent is the GC percent to put back once the large request's call is over; held says
// there is one.
var (
	heldGCPercent int
	held          bool
)

//go:wasmexport aa_alloc
func alloc(size uint32) uint32 {
	if size == 0 {
		size = 1
	}
	if size >= largeRequest && !held {
		heldGCPercent, held = debug.SetGCPercent(-1), true
	}
	buf := make([]byte, size)
	ptr := uint32(uintptr(unsafe.Pointer(&buf[0])))
	pinned[ptr] = buf
	return ptr
}

//go:wasmexport aa_free
func free(ptr uint32) {
	delete(pinned, ptr)
}

// aa_call takes a request the host wrote into a buffer from aa_alloc and returns the response as
// ptr<<32 | len. The host reads it, then frees both buffers.
//
//go:wasmexport aa_call
func call(ptr, size uint32) uint64 {
	buf, ok := pinned[ptr]
	var resp []byte
	if !ok || int(size) > len(buf) {
		resp = []byte(`{"ok":false,"error":"aa_call: request buffer was not allocated with aa_alloc"}`)
	} else {
		if testTrap != nil {
			testTrap(buf[:size])
		}
		resp = runtime.Call(buf[:size])
	}
	if held {
		debug.SetGCPercent(heldGCPercent)
		held = false
	}
	if len(resp) == 0 {
		resp = []byte(`{"ok":false,"error":"empty response"}`)
	}
	// The response is handed over as it is (no copy), pinned until the host frees it.
	out := uint32(uintptr(unsafe.Pointer(&resp[0])))
	pinned[out] = resp
	collect()
	return uint64(out)<<32 | uint64(len(resp))
}

// Go's collector does not finish a cycle on its own in this module: its mark workers are
// goroutines, and between two calls from the host no goroutine runs. Left alone, the heap only
// grew: 56 MB per event-stream snapshot of 10,000 tasks, 2 GB (and a broken instance) after 35 of
// them. So a call that leaves the heap at twice what the last collection kept (and at least
// minCollectHeap) ends with a full collection, GOGC's rule applied where the host can wait. A
// restore's heap counts as kept without collecting (Runtime.KeptAll).
const minCollectHeap = 16 << 20

var (
	heapSample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	keptHeap   uint64 // live heap after the last collection
)

func collect() {
	metrics.Read(heapSample)
	heap := heapSample[0].Value.Uint64()
	if runtime.KeptAll() {
		// A restore: the heap is the restored state (and the history it points into), not
		// garbage. It is the base the next collection is measured from.
		keptHeap = heap
		return
	}
	if heap < minCollectHeap || heap < 2*keptHeap {
		return
	}
	goruntime.GC()
	metrics.Read(heapSample)
	keptHeap = heapSample[0].Value.Uint64()
}
