// The shapes of the core's JSON envelope (ABI v1, see ../ABI.md). The interfaces and shared
// constants are generated from the Go types (abi_types.gen.ts, `make generate`); this file adds
// only what TypeScript alone needs: the events as a union, one member per event type.

import type { CoreEventFields } from "./abi_types.gen";

export * from "./abi_types.gen";

/** Fields of CoreEventFields that an event of one type must carry. */
type With<K extends keyof CoreEventFields> = Required<Pick<CoreEventFields, K>>;

/** One input to the core's state machine, as a host builds it. */
export type CoreEvent =
  | ({ type: "tool.call"; args: unknown } & With<"callID" | "tool" | "sessionID"> & Pick<CoreEventFields, "messageID" | "agent">)
  | ({ type: "tool.aborted" } & With<"callID">)
  | ({ type: "effect.done"; ok: boolean } & With<"effectID"> & Pick<CoreEventFields, "result" | "error">)
  // worker: the worker whose event stream it came from (absent for the local OpenCode); events:
  // several of its events in the stream's order, grouped as worker.follow's rule allows.
  | ({ type: "opencode"; worker?: string } & (With<"event"> | With<"events">))
  // A worker's event stream connected (up) or dropped, with the plain reason.
  | { type: "worker.state"; worker: string; up: boolean; error?: string }
  // How many status API event streams are open, from a host that counts them (core/api_streams.go).
  | { type: "api.streams"; open: number }
  | ({ type: "timer.fired" } & With<"timerID">)
  | { type: "start" };
