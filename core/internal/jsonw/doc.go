// Package jsonw holds the pieces the core's hand-written JSON encoders (a task, an effect, the
// ABI's response envelope) are made of: a field after the first, written as encoding/json writes
// it. It is a leaf: it imports only the standard library.
package jsonw
