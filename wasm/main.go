//go:build wasip1

// Command wasm is the core as a WebAssembly module: a reactor (built with -buildmode=c-shared)
// whose exports are the ABI described in ../ABI.md. It holds one core.Runtime; hosts serialise
// their calls.
package main

import (
	"unsafe"

	"github.com/asyncagents/asyncagents/core"
)

func main() {}

var runtime = core.NewRuntime()

// pinned keeps every buffer handed to the host alive until the host frees it: the Go garbage
// collector does not know the host holds a pointer into it.
var pinned = map[uint32][]byte{}

//go:wasmexport aa_abi_version
func abiVersion() uint32 { return core.ABIVersion }

//go:wasmexport aa_alloc
func alloc(size uint32) uint32 {
	if size == 0 {
		size = 1
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
		resp = runtime.Call(buf[:size])
	}
	if len(resp) == 0 {
		resp = []byte(`{"ok":false,"error":"empty response"}`)
	}
	out := alloc(uint32(len(resp)))
	copy(pinned[out], resp)
	return uint64(out)<<32 | uint64(len(resp))
}
