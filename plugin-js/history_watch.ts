// When a runtime looks at the logs the project's other processes write (histories.ts): when their
// folder changes, and otherwise only now and then. The folder is watched (inotify, FSEvents); a
// change of a file that is not this process's own starts a look at once, at most one per
// FOLLOW_INTERVAL_MS, and the timed look comes every FOLLOW_WATCHED_INTERVAL_MS, a net under a
// watch that missed a change. Where the folder cannot be watched (it does not exist yet, or the
// file system does not tell), the look comes every FOLLOW_INTERVAL_MS as before, and the watch is
// tried again at each. The intervals are the core's (core/limits.go); this only keeps time.

import { watch, type FSWatcher } from "node:fs";
import { basename } from "node:path";

export interface LookTiming {
  /** The least time between two looks, and the timed look's interval without a watch. */
  ms: number;
  /** The timed look's interval while the folder is watched. */
  watchedMs: number;
}

/** Tells a test each change the watch reported, and whether it started a look. */
export type OnChange = (name: string, counted: boolean) => void;

export class LookSchedule {
  private watcher?: FSWatcher;
  private timer?: ReturnType<typeof setInterval>;
  private soon?: ReturnType<typeof setTimeout>;
  private last = -Infinity;
  private stopped = false;

  constructor(
    /** The folder to watch; none: timed looks only. */
    private readonly dir: string | undefined,
    /** Whether a file of the folder is this process's own (its writes start no look). */
    private readonly own: (name: string) => boolean,
    private readonly look: () => void,
    private readonly timing: LookTiming,
    private readonly onChange?: OnChange,
  ) {
    this.rearm();
  }

  /** Whether the folder is watched now (else the look is timed every timing.ms). */
  get watching(): boolean {
    return this.watcher !== undefined;
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.soon);
    this.watcher?.close();
    this.watcher = undefined;
  }

  /** Watches the folder if it can, and times the look for what it got. */
  private rearm(): void {
    if (this.stopped) return;
    this.watcher ??= this.tryWatch();
    clearInterval(this.timer);
    this.timer = setInterval(() => this.timed(), this.watcher ? this.timing.watchedMs : this.timing.ms);
    unref(this.timer);
  }

  private timed(): void {
    this.run();
    // The folder may exist by now: once watched, the timed look slows down.
    if (!this.watcher && (this.watcher = this.tryWatch())) this.rearm();
  }

  private tryWatch(): FSWatcher | undefined {
    if (this.dir === undefined) return undefined;
    try {
      const w = watch(this.dir, { persistent: false }, (_event, name) => {
        const counted = name == null || !this.own(String(name));
        this.onChange?.(String(name ?? ""), counted);
        if (counted) this.changed();
      });
      // The folder removed, or the watch failed: back to timed looks, and the watch is tried again.
      w.on("error", () => {
        w.close();
        if (this.watcher === w) {
          this.watcher = undefined;
          this.rearm();
        }
      });
      return w;
    } catch {
      return undefined;
    }
  }

  /** A change: a look now, or when timing.ms has passed since the last one. */
  private changed(): void {
    if (this.soon || this.stopped) return;
    this.soon = setTimeout(
      () => {
        this.soon = undefined;
        this.run();
      },
      Math.max(0, this.last + this.timing.ms - performance.now()),
    );
    unref(this.soon);
  }

  private run(): void {
    if (this.stopped) return;
    this.last = performance.now();
    this.look();
  }
}

function unref(t: unknown): void {
  (t as { unref?: () => void }).unref?.();
}

/** Whether name is one of path's files: the log, its index, or a file written over either. */
export function ownFile(name: string, ...paths: string[]): boolean {
  return paths.some((p) => name === basename(p) || name.startsWith(`${basename(p)}.`));
}
