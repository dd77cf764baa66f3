// Groups the events of one worker's stream as the core's follow rule says (core/follow_batch.go,
// ABI.md worker.follow): progress waits a little and goes as one batch, a later update of the
// same part, message or session stands for the earlier, and anything else goes at once with
// what waits before it. No decisions: which types wait, for how long, and what stands for what
// are the rule's.

import type { FollowRule, OpenCodeEvent } from "../bridge/types";

/** The value at a dot path of an event's properties, when it is a string. */
export function keyAt(properties: unknown, path: string): string | undefined {
  let v: any = properties;
  for (const name of path.split(".")) {
    if (v === null || typeof v !== "object") return undefined;
    v = v[name];
  }
  return typeof v === "string" ? v : undefined;
}

export class EventGroup {
  private waiting: (OpenCodeEvent | undefined)[] = [];
  /** type + "\0" + key → the index in waiting of the latest event with that key. */
  private readonly latest = new Map<string, number>();
  private readonly defer: ReadonlySet<string>;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly rule: FollowRule | undefined,
    private readonly send: (events: OpenCodeEvent[]) => void,
  ) {
    this.defer = new Set(rule && rule.batchMs > 0 ? rule.defer : []);
  }

  /** Takes the stream's next event: it waits, or goes now with what waits before it. */
  push(ev: OpenCodeEvent): void {
    if (!this.defer.has(ev.type)) {
      this.flush(ev);
      return;
    }
    const path = this.rule!.coalesce?.[ev.type];
    const key = path === undefined ? undefined : keyAt(ev.properties, path);
    if (key !== undefined) {
      const k = `${ev.type}\u0000${key}`;
      const at = this.latest.get(k);
      if (at !== undefined) this.waiting[at] = undefined;
      this.latest.set(k, this.waiting.length);
    }
    this.waiting.push(ev);
    if (this.timer === undefined) {
      this.timer = setTimeout(() => this.flush(), this.rule!.batchMs);
      (this.timer as any).unref?.();
    }
  }

  /** Sends what waits (and last after it), in the stream's order; nothing when nothing waits. */
  flush(last?: OpenCodeEvent): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const events = this.waiting.filter((e): e is OpenCodeEvent => e !== undefined);
    if (last) events.push(last);
    this.waiting = [];
    this.latest.clear();
    if (events.length > 0) this.send(events);
  }

  /** Forgets what waits, unsent (the plugin stops). */
  drop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.waiting = [];
    this.latest.clear();
  }
}
