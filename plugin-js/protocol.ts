// The messages between the plugin's main thread (remote.ts) and its Worker (worker.ts). Plain
// data only: postMessage copies them.

import type { CoreEvent } from "../bridge/core";
import type { CoreSetup } from "./local";
import type { ToolAnswer } from "./runtime";
import type { OwnFile } from "./server";

/** What a tool call carries across: the fields of OpenCode's context the core reads. */
export interface CallContext {
  sessionID: string;
  messageID: string;
  agent: string;
  callID?: string;
}

export type ToWorker =
  | { t: "init"; wasmURL: string; setup: CoreSetup; slot?: SharedArrayBuffer }
  | { t: "event"; event: CoreEvent }
  /** sync: OpenCode's thread waits on the shared slot for the answer (answer_slot.ts). */
  | { t: "call"; id: number; tool: string; args: unknown; ctx: CallContext; sync?: boolean }
  | { t: "abort"; id: number }
  /** The main thread has handed call id's answer to OpenCode. */
  | { t: "returned"; id: number }
  | { t: "done"; id: number; ok: boolean; result?: unknown; error?: string }
  | { t: "stop"; graceMs: number };

export type ToMain =
  | { t: "perform"; id: number; effect: unknown }
  | { t: "answer"; id: number; answer?: ToolAnswer; error?: string }
  | { t: "log"; level: string; message: string }
  | { t: "server"; file: OwnFile }
  | { t: "stopped" };
