// The main thread's side of the plugin's Worker (worker.ts): tool calls and OpenCode's events go
// over, the effects that need OpenCode come back and are carried out here, on the SDK client
// OpenCode gave the plugin. The process's signals are handled here too (a Worker gets none):
// on SIGINT/SIGTERM the Worker's API server stops gracefully, and on exit server.json goes.

import type { CoreEvent, Effect } from "../bridge/core";
import type { CoreSetup, Log, Perform } from "./local";
import type { ToMain, ToWorker } from "./protocol";
import { forgetAtProcessEnd } from "./process_end";
import { removeOwnFile, type OwnFile } from "./server";
import type { ToolAnswer, ToolCallContext } from "./runtime";
import { newSlot, slotMark, waitSlot } from "./answer_slot";

/** What the plugin's tools and hooks use, wherever the core runs. */
export interface CoreHost {
  callTool(tool: string, args: unknown, ctx: ToolCallContext): Promise<ToolAnswer>;
  feed(ev: CoreEvent): void;
  /**
   * OpenCode disposed the plugin's instance (its dispose hook: the instance reloads, or OpenCode
   * ends): everything the plugin started stops, so that the next instance, which restores the
   * same history, is the only one at work.
   */
  dispose(): Promise<void>;
}

/** How long a stop waits for the Worker beyond the server's own grace period. */
const STOP_SLACK_MS = 500;

/**
 * How long a dispose lets the API's answers in flight finish. OpenCode waits for the dispose hook
 * before the instance is gone, so this is shorter than a signal's grace.
 */
export const DISPOSE_GRACE_MS = 500;

export class WorkerCore implements CoreHost {
  private readonly worker: Worker;
  private seq = 0;
  private readonly calls = new Map<number, { resolve(a: ToolAnswer): void; reject(e: Error): void }>();
  private serverFile?: OwnFile;
  private stopped?: () => void;
  private failure?: string;
  private stopping?: Promise<void>;
  private disposing?: Promise<void>;
  private terminated = false;
  /** Where the Worker puts an immediate answer (answer_slot.ts); none where Atomics cannot wait. */
  private readonly slot = typeof SharedArrayBuffer === "function" ? newSlot() : undefined;

  /**
   * Starts the Worker, which compiles the module itself. (Compiled on the main thread, the
   * module would reach the Worker only when OpenCode's thread was free to pass it on, which is
   * later than the Worker's own compile is done.)
   */
  constructor(workerURL: URL, wasmURL: URL, setup: CoreSetup, private readonly perform: Perform, private readonly log: Log) {
    // The Worker reads a worker's password from its environment variable (workers_client.ts): it
    // gets this thread's environment as it is now. Without this, a Bun Worker sees only the
    // environment the process started with, not what was set since (a variable a test set read
    // "not set" there).
    this.worker = new Worker(workerURL, { env: process.env } as WorkerOptions);
    // The Worker must never keep OpenCode from exiting.
    (this.worker as any).unref?.();
    this.worker.onmessage = (e: MessageEvent<ToMain>) => this.receive(e.data);
    this.worker.onerror = (e: ErrorEvent) => this.fail(e.message || "the worker failed");
    this.send({ t: "init", wasmURL: wasmURL.href, setup, slot: this.slot });
  }

  callTool(tool: string, args: unknown, ctx: ToolCallContext): Promise<ToolAnswer> {
    if (this.failure) return Promise.reject(new Error(`asyncagents is unavailable: ${this.failure}`));
    const id = ++this.seq;
    return new Promise<ToolAnswer>((resolve, reject) => {
      this.calls.set(id, { resolve, reject });
      ctx.abort?.addEventListener("abort", () => this.send({ t: "abort", id }), { once: true });
      const { sessionID, messageID, agent, callID } = ctx;
      const mark = this.slot ? slotMark(this.slot) : 0;
      this.send({ t: "call", id, tool, args, ctx: { sessionID, messageID, agent, callID }, sync: this.slot !== undefined });
      if (ctx.abort?.aborted) this.send({ t: "abort", id }); // aborted before the call: the listener never fires
      const now = this.slot && !this.terminated ? waitSlot(this.slot, id, mark) : undefined;
      if (now) this.settle(id, now.answer, now.error);
    });
  }

  /**
   * Settles call id, once (the slot and the message may both bring its answer), and tells the
   * Worker when OpenCode has run on with it: what follows the answer (the child session's creation)
   * waits for that (Runtime.carryOutAll).
   */
  private settle(id: number, answer?: ToolAnswer, error?: string): void {
    const call = this.calls.get(id);
    if (!call) return;
    this.calls.delete(id);
    if (error !== undefined) call.reject(new Error(error));
    else call.resolve(answer!);
    setTimeout(() => this.send({ t: "returned", id }), 0);
  }

  feed(ev: CoreEvent): void {
    this.send({ t: "event", event: ev });
  }

  /**
   * Stops the Worker's API server gracefully (server.json goes first); resolves when it is down.
   * A second call (a signal, then OpenCode's dispose) gets the same promise.
   */
  stop(graceMs: number): Promise<void> {
    this.removeServerJSON();
    this.stopping ??= new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, graceMs + STOP_SLACK_MS);
      this.stopped = () => {
        clearTimeout(timer);
        resolve();
      };
      this.send({ t: "stop", graceMs });
    });
    return this.stopping;
  }

  /**
   * Stops the Worker's API server (server.json goes first, answers in flight get graceMs), then
   * ends the Worker: its timers, its history and its core with it. Tool calls still waiting are
   * refused. Every history line is written synchronously when its change is made, so nothing
   * finished is lost.
   */
  dispose(graceMs = DISPOSE_GRACE_MS): Promise<void> {
    this.disposing ??= (async () => {
      forgetAtProcessEnd(this);
      await this.stop(graceMs);
      this.terminated = true;
      this.worker.terminate();
      this.failure = "the plugin was unloaded by OpenCode";
      for (const call of this.calls.values()) call.reject(new Error(`asyncagents is unavailable: ${this.failure}`));
      this.calls.clear();
    })();
    return this.disposing;
  }

  /** Removes server.json at once. Synchronous, so an 'exit' handler can call it. */
  removeServerJSON(): void {
    removeOwnFile(this.serverFile);
    this.serverFile = undefined;
  }

  /** What the process's 'exit' does for the Worker's server (see stopWithProcess): server.json goes. */
  atExit(): void {
    this.removeServerJSON();
  }

  private send(m: ToWorker): void {
    if (this.terminated) return;
    try {
      this.worker.postMessage(m);
    } catch {
      // An event holding something postMessage cannot copy goes as its JSON.
      this.worker.postMessage(JSON.parse(JSON.stringify(m)));
    }
  }

  private receive(m: ToMain): void {
    switch (m.t) {
      case "perform": {
        const id = m.id;
        this.perform(m.effect as Effect).then(
          (result) => this.send({ t: "done", id, ok: true, result }),
          (err) => this.send({ t: "done", id, ok: false, error: err instanceof Error ? err.message : String(err) }),
        );
        return;
      }
      case "answer":
        return this.settle(m.id, m.answer, m.error);
      case "log":
        return this.log(m.level, m.message);
      case "server":
        this.serverFile = m.file;
        return;
      case "stopped":
        this.stopped?.();
        return;
    }
  }

  private fail(message: string): void {
    this.failure = message;
    this.log("error", `asyncagents: the worker failed: ${message}`);
    for (const call of this.calls.values()) call.reject(new Error(`asyncagents is unavailable: ${message}`));
    this.calls.clear();
  }
}
