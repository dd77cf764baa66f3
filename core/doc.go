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
//	core                 the machine (this package): handlers, decisions carried out as effects
//	  │
//	httpapi              the status API: routes, answers, SSE frames, the answer cache, the
//	  │                  dashboard's one-time codes; reads a Store (the tasks, a change
//	  │                  counter), never the machine
//	view                 what the task list, the output and the dashboard show of the tasks
//	  │
//	history, slots,      history: the history's lines: format, checksums, decoding, head-first
//	budget, placement    reading (internal/tasktest beside it: the tests' task fixtures); slots
//	  │                  and budget, policies over the tasks: slots the start queue (slot use
//	  │                  local and per worker, blocked-by, who starts, queue places), budget a
//	  │                  task's budget, the limit it passed, and the one walk up the session
//	  │                  tree that the session's budget and the permission routing use;
//	  │                  placement where a new task runs (local, a named worker, "auto")
//	task                 the task record: Task, Status, errors, progress, fallback record, encoder
//	  │
//	config, outbox       every limit and switch, defaults, the config files; outbox (the notices'
//	  │                  delivery policy: per-parent boxes, backoff, delivered / named since)
//	  │
//	ocevents             OpenCode's events and messages, decoded into typed values
//	  │
//	leaves               errclass (provider errors), forkctx (fork context, token estimate),
//	                     text (every format of a duration, count, token figure or cost),
//	                     internal/jsonr (JSON reader for the hand-written decoders),
//	                     worktree (isolated tasks' names, overlap, merge refusal, reconcile),
//	                     conformance (the cases every host runs), internal/xxh64 (checksum),
//	                     internal/jsonw (JSON field writer), internal/version,
//	                     internal/encodetest (the encoders' tests' variants)
//
// Packages named in one row share a layer and do not import each other. The policies hold no
// machine: given the tasks, the config or a lookup function, they return what to do, and the
// machine does it (emits the effects, arms the timers, writes the history). Their state lives in
// their own types, held by one field of the Machine (outbox.Boxes).
//
// What decides stays with the machine; each package below it gets plain values or a small
// interface. What the machine keeps of a task beside its record (the fallback loop's place, the
// message it tracks, the task's place in the history log) is run, which embeds task.Task and
// never leaves this package.
package core
