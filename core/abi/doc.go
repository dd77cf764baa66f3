// Package abi is the wire layer the hosts see: the request and response envelopes, their
// encoding and decoding (the raw history and HTTP body after a NUL byte), and the Runtime that
// dispatches each operation to the machine (package core). The wasm module exports it, and the
// native tests call it, so both run the very same dispatch code.
//
// It sits on top of the layers: it imports core and below, and nothing of the core imports it.
package abi
