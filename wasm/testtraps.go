//go:build wasip1 && testtraps

package main

import (
	"bytes"
	"unsafe"
)

// Built only with -tags testtraps (make build's dist/test/asyncagents.wasm, and the Go tests'
// own build): a tool call whose arguments hold testTrapMarker followed by a kind makes the module
// really trap, outside the core's recover, so each host's tests can prove that a trap costs one
// call. Only a tool.call traps: OpenCode's later events about that call carry the same arguments,
// and must not trap again.
const testTrapMarker = "asyncagents-test-trap:"

// sink keeps the load from being optimised away.
var sink uint64

func init() {
	testTrap = func(req []byte) {
		at := bytes.Index(req, []byte(testTrapMarker))
		if at < 0 || !bytes.Contains(req, []byte(`"type":"tool.call"`)) {
			return
		}
		kind := req[at+len(testTrapMarker):]
		switch {
		case bytes.HasPrefix(kind, []byte("panic")):
			// Unrecovered: the Go runtime prints the panic and exits (proc_exit).
			panic("asyncagents test trap")
		case bytes.HasPrefix(kind, []byte("memory")):
			// A load past the end of linear memory: a WebAssembly trap.
			sink = *(*uint64)(unsafe.Pointer(uintptr(0xfffffff0)))
		}
	}
}
