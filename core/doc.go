// Package core is the machine of asyncagents: the task store and the state machine over it. It
// decides and emits effects: the tools' answers, the notices, the start queue, resumes, forks,
// the model fallback loop and the circuit breaker, and when the history is written, compacted,
// restored and reconciled. It does no I/O and reads no clock: hosts feed it Events (a tool call,
// an OpenCode event, the result of an effect, a timer firing) with the time, and carry out the
// Effects it returns. The same package runs natively in Go tests and, through package abi and
// the wasm module, inside the plugin and the Go host, so a behaviour tested here is the behaviour
// users get.
//
// # Architecture
//
// The core is packages in layers. A package imports only from layers below its own, the leaves
// import none of the core, and nothing imports upward (layers_test.go holds every package to
// it):
//
//	abi                  the wire layer the hosts see: envelopes, their encoding, the Runtime
//	  │
//	core                 the machine (this package): decisions and effects
//	  │
//	httpapi              the status API: routes, answers, SSE frames, the answer cache, the
//	  │                  dashboard's one-time codes; reads a Store (the tasks, a change
//	  │                  counter), never the machine
//	history              the history's lines: format, checksums, decoding, head-first reading
//	  │                  (internal/tasktest beside it: the tests' task fixtures)
//	task                 the task record: Task, Status, errors, progress, fallback record, encoder
//	  │
//	config               every limit and switch, defaults, the config files
//	  │
//	leaves               errclass (provider errors), forkctx (fork context, token estimate),
//	                     worktree (isolated tasks' names, overlap, merge refusal, reconcile),
//	                     conformance (the cases every host runs), internal/xxh64 (checksum),
//	                     internal/jsonw (JSON field writer), internal/version,
//	                     internal/encodetest (the encoders' tests' variants)
//
// What decides stays with the machine; each package below it gets plain values or a small
// interface. What the machine keeps of a task beside its record (the fallback loop's place, the
// message it tracks, the task's place in the history log) is run, which embeds task.Task and
// never leaves this package.
package core
