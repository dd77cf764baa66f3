// Package core is the whole of asyncagents' logic: the task store, the task state machine, the
// tool texts, the notifications and every limit. It does no I/O and reads no clock: hosts feed it
// Events (a tool call, an OpenCode event, the result of an effect, a timer firing) with the time,
// and carry out the Effects it returns. The same package runs natively in Go tests and, through
// package wasm, inside the plugin and the Go host, so a behaviour tested here is the behaviour
// users get.
package core
