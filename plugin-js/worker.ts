// The Worker the plugin runs its core in (see remote.ts for the other side). Here live the
// runtime, the core's instance, its timers, the history file and the status API server: a
// request to the API, or the restore of a long history, never waits on OpenCode's event loop,
// and never holds it up. What needs OpenCode (its SDK client, the log, tmux) is asked of the
// main thread, which carries it out and sends back the result.

import { compile } from "../bridge/core";
import { startLocal } from "./local";
import type { Runtime } from "./runtime";
import type { ApiServer } from "./server";
import type { WorkerFollowers } from "./workers_follow";
import type { DrainablePerform } from "./perform_drain";
import type { ToMain, ToWorker } from "./protocol";
import { writeSlot } from "./answer_slot";

declare const self: Worker;

let runtime: Runtime | undefined;
let api: ApiServer | undefined;
let followers: WorkerFollowers | undefined;
let effects: DrainablePerform | undefined;
let seq = 0;
const performing = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
const aborts = new Map<number, AbortController>();
const returns = new Map<number, () => void>();
let slot: SharedArrayBuffer | undefined;

const send = (m: ToMain) => self.postMessage(m);

self.onmessage = (e: MessageEvent<ToWorker>) => {
  const m = e.data;
  switch (m.t) {
    case "init": {
      slot = m.slot;
      const module = Bun.file(new URL(m.wasmURL)).arrayBuffer().then(compile);
      const perform = (effect: unknown) =>
        new Promise<unknown>((resolve, reject) => {
          const id = ++seq;
          performing.set(id, { resolve, reject });
          send({ t: "perform", id, effect });
        });
      const log = (level: string, message: string) => send({ t: "log", level, message });
      ({ runtime, api, followers, effects } = startLocal(module, m.setup, perform as any, log, (file) => send({ t: "server", file }), "worker"));
      return;
    }
    case "done": {
      const p = performing.get(m.id);
      performing.delete(m.id);
      if (m.ok) p?.resolve(m.result);
      else p?.reject(new Error(m.error));
      return;
    }
    case "event":
      runtime?.feed(m.event);
      return;
    case "call": {
      const ac = new AbortController();
      aborts.set(m.id, ac);
      const returned = new Promise<void>((r) => returns.set(m.id, r));
      // OpenCode's thread may be waiting on the slot: it hears the answer there at once, or that
      // there is none yet (the core is still loading, or the call waits on something).
      let answered = false;
      const onAnswer = m.sync && slot ? (a: { answer?: unknown; error?: string }) => {
        answered = true;
        writeSlot(slot!, m.id, a as any);
      } : undefined;
      const pending = runtime!.callTool(m.tool, m.args, { ...m.ctx, abort: ac.signal, returned, onAnswer });
      if (onAnswer && !answered) writeSlot(slot!, m.id, undefined);
      pending
        .then(
          (answer) => send({ t: "answer", id: m.id, answer }),
          (err) => send({ t: "answer", id: m.id, error: err instanceof Error ? err.message : String(err) }),
        )
        .finally(() => aborts.delete(m.id));
      return;
    }
    case "abort":
      aborts.get(m.id)?.abort();
      return;
    case "returned":
      returns.get(m.id)?.();
      returns.delete(m.id);
      return;
    case "stop":
      // The Worker ends after this (terminated, or with the process): the effects in flight
      // finish first, and no new one starts (perform_drain.ts).
      followers?.stop();
      void Promise.all([api?.stop(m.graceMs), effects?.drain(m.graceMs)]).then(() => send({ t: "stopped" }));
      return;
  }
};
