// The project's history as one log per process (core/history_files.go, ABI.md "One log per
// process"): at a start, the logs of processes that are gone are taken over as the core plans;
// then the other processes' logs are followed, read-only. What to take, what to follow and what
// their tasks mean is the core's call; this reads, renames and removes files as it says.

import { readFileSync } from "node:fs";
import { dirname } from "node:path";
import { CoreTrap, type Core, type CoreResponse, type Effect } from "../bridge/core";
import type { History, LogFile } from "./history";
import { LookSchedule, ownFile, type LookTiming } from "./history_watch";
import type { StorageEnv } from "./runtime";

type Log = (level: string, message: string) => void;

export class ProjectHistories {
  /** Looks at the logs the project's other processes write, while the plugin runs. */
  private schedule?: LookSchedule;

  constructor(
    private readonly history: () => History,
    private readonly env: StorageEnv,
    private readonly log: Log,
  ) {}

  /**
   * Calls look when the other processes' logs change, and on a timer, until stop (history_watch.ts):
   * the runtime follows the other processes' logs with it.
   */
  every(timing: LookTiming, look: () => void): void {
    this.stop();
    const files = this.history().files;
    const own = (name: string) => (files ? ownFile(name, files.history, files.index) : false);
    this.schedule = new LookSchedule(files ? dirname(files.history) : undefined, own, look, timing);
  }

  stop(): void {
    this.schedule?.stop();
    this.schedule = undefined;
  }

  /**
   * Restores core from this process's log, after taking over the logs of the project's processes
   * that are gone: the first is renamed to this process's log (its index with it), the others are
   * read after it (merged), and the core folds them in and has them removed.
   */
  restore(core: Core, request: Record<string, unknown>, readIndex: () => string | Uint8Array): CoreResponse {
    const history = this.history();
    const merged = this.adopt(core);
    // Read by the bridge, straight into the core's memory.
    if (history.files && merged.length === 0) return core.callWithFiles(request, history.files);
    const dir = history.dir;
    const parts = [history.read(), ...merged.map((name) => dir!.read(name))].map((p) => (typeof p === "string" ? new TextEncoder().encode(p) : p));
    // Each log ends its last line, so a torn one does not swallow the next log's first.
    const chunks = parts.flatMap((p) => (p.length > 0 && p[p.length - 1] !== 10 ? [p, new Uint8Array([10])] : [p]));
    const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
    chunks.reduce((at, c) => (all.set(c, at), at + c.length), 0);
    return core.call({ ...request, history: all, index: readIndex(), merged });
  }

  /** Takes the logs the core says are this process's now; returns those to merge. */
  private adopt(core: Core): string[] {
    const dir = this.history().dir;
    if (!dir) return [];
    const files = dir.list();
    const ask = (procs?: unknown[]) => core.call({ op: "histories", env: this.env, procStat: procStat(), files, procs, adopt: true }).histories ?? {};
    let plan = ask();
    if (plan.check?.length) plan = ask(plan.check.map(procInfo));
    const merged: string[] = [];
    for (const a of plan.adopt ?? []) {
      try {
        // A log already gone was taken by another process starting at the same time.
        if (a.from !== a.to && !dir.rename(a.from, a.to)) continue;
        if (a.indexFrom && a.indexTo) dir.rename(a.indexFrom, a.indexTo);
        else if (a.indexFrom) dir.remove(a.indexFrom);
        if (a.merge) merged.push(a.to);
      } catch (err) {
        this.log("error", `asyncagents: taking over the task history log ${a.from} failed: ${(err as Error).message}`);
      }
    }
    return merged;
  }

  /**
   * Applies what the other processes' logs gained since the last look: the core lists their
   * tasks in the status API and acts on none of them. Where each log was read to, and what to
   * read of it now, is the core's to say (follow.look); a new instance knows none, and reads
   * each whole. A trap is thrown for the caller to recover.
   */
  follow(core: Core, carryOut: (effects: Effect[]) => void): void {
    const dir = this.history().dir;
    if (!dir) return;
    try {
      const plan = core.call({ op: "histories", env: this.env, procStat: procStat(), files: dir.list() }).histories ?? {};
      // The core names the logs to look at, those it holds tasks of included (one gone drops them).
      for (const name of plan.follow ?? []) {
        let file: LogFile | undefined;
        try {
          file = dir.open(name);
        } catch (err) {
          this.log("error", `asyncagents: reading the task history log ${name} failed: ${(err as Error).message}`);
          continue;
        }
        try {
          const look = core.call({ op: "follow.look", now: Date.now(), source: name, stat: file?.stat });
          carryOut(look.effects ?? []);
          if (!file || !look.follow?.read) continue;
          const history = file.read(look.follow.from ?? 0);
          // A log read for the first time comes with its index, when it has one: its tasks then
          // load as a restart's do, not line by line.
          const indexName = look.follow.first ? plan.indexes?.[name] : undefined;
          const index = indexName ? dir.read(indexName) : "";
          carryOut(core.call({ op: "follow", now: Date.now(), source: name, history, index }).effects ?? []);
        } finally {
          file?.close();
        }
      }
    } catch (err) {
      if (err instanceof CoreTrap) throw err;
      this.log("error", `asyncagents: following the project's other task histories failed: ${(err as Error).message}`);
    }
  }
}

let ownStat: string | undefined;

/**
 * This process's /proc/self/stat line, where there is one: the core reads its start time in it,
 * which never changes, so the file is read once (the logs are looked at every second).
 */
export function procStat(): string {
  if (ownStat === undefined) {
    try {
      ownStat = readFileSync("/proc/self/stat", "utf8");
    } catch {
      ownStat = "";
    }
  }
  return ownStat;
}

/** Whether pid runs, with its /proc/<pid>/stat line where there is one (the core reads its start). */
export function procInfo(pid: number): { pid: number; running: boolean; stat?: string } {
  try {
    return { pid, running: true, stat: readFileSync(`/proc/${pid}/stat`, "utf8") };
  } catch {}
  try {
    process.kill(pid, 0);
    return { pid, running: true };
  } catch (err) {
    return { pid, running: (err as NodeJS.ErrnoException).code === "EPERM" };
  }
}
