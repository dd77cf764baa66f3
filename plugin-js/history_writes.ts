// The history's effects, as a runtime carries them out: each write in order, synchronously (a
// line is on disk before the effects after it), a failure logged and kept for the core's next
// history.sync, which answers whether the writes since the last one worked
// (core/storage_fault.go). The tasks go on whatever the disk does.

import type { Effect } from "../bridge/core";
import type { History } from "./history";

type Log = (level: string, message: string) => void;

export class HistoryWrites {
  /** The first write that failed since the core last asked (history.sync). */
  private writeError?: string;

  constructor(
    private readonly history: () => History,
    private readonly log: Log,
  ) {}

  /**
   * Carries out e if it is a history effect (false otherwise). A history.sync's answer goes to
   * answer after the step's other effects, as any effect's result does.
   */
  carryOut(e: Effect, answer: (ok: boolean, error?: string) => void): boolean {
    const h = this.history();
    switch (e.kind) {
      case "history.append":
        this.write("writing the task history", () => h.append(e.line!));
        return true;
      case "history.rewrite":
        this.write("compacting the task history", () => h.rewrite(e.content!));
        return true;
      case "history.index":
        // The index is a shortcut for the next start, which checks that it fits: not a write
        // the history's promise depends on.
        this.attempt("writing the task history index", () => h.writeIndex(e.content!));
        return true;
      case "history.remove":
        this.attempt("removing a task history log taken over", () => h.dir?.remove(e.file!));
        return true;
      case "history.sync": {
        const error = this.writeError;
        this.writeError = undefined;
        queueMicrotask(() => answer(!error, error));
        return true;
      }
    }
    return false;
  }

  private write(what: string, fn: () => void): void {
    const error = this.attempt(what, fn);
    if (error) this.writeError ??= error;
  }

  /** Runs fn; a failure is logged and returned. */
  private attempt(what: string, fn: () => void): string | undefined {
    try {
      fn();
    } catch (err) {
      const message = (err as Error).message;
      this.log("error", `asyncagents: ${what} failed: ${message}`);
      return message;
    }
    return undefined;
  }
}
