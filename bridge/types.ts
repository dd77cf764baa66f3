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
  | ({ type: "opencode" } & With<"event">)
  | ({ type: "timer.fired" } & With<"timerID">)
  | { type: "start" };
