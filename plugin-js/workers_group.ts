// Groups the events of one worker's stream as the core's follow rule says (core/follow_batch.go,
// ABI.md worker.follow): progress waits a little and goes as one batch, a later update of the
// same part, message or session stands for the earlier, and anything else goes at once with
// what waits before it. No decisions: which types wait, for how long, and what stands for what
// are the rule's.
//
// A frame of a type that waits may be held undecoded, its bytes copied into one buffer kept from
// batch to batch, and decoded when its batch goes: taking it allocates nothing, and the garbage
// its decoding makes comes once a batch, not once a read (workers_frames.ts says why that matters).

import type { FollowRule, OpenCodeEvent } from "../bridge/types";
import { ByteStore, IntList } from "./workers_frames";

/** The value at a dot path of an event's properties, when it is a string. */
export function keyAt(properties: unknown, path: string): string | undefined {
  let v: any = properties;
  for (const name of path.split(".")) {
    if (v === null || typeof v !== "object") return undefined;
    v = v[name];
  }
  return typeof v === "string" ? v : undefined;
}

/** Decodes a held frame's data into the event it carries; undefined for one not to be fed. */
export type DecodeFrame = (data: string) => OpenCodeEvent | undefined;

/** The held frames' bytes, one after another in a ByteStore kept from batch to batch. */
class HeldFrames {
  private readonly store = new ByteStore(64 * 1024);
  /** ends.items[i]: where frame i ends in the store (it starts where frame i-1 ends). */
  private readonly ends = new IntList();

  /** Copies bytes[start, end) in as the next frame; returns its index. */
  add(src: Buffer, start: number, end: number): number {
    this.store.append(src, start, end);
    return this.ends.push(this.store.length);
  }

  text(i: number): string {
    const ends = this.ends.items;
    return this.store.bytes.toString("utf8", i === 0 ? 0 : ends[i - 1], ends[i]);
  }

  clear(): void {
    this.ends.count = 0;
    this.store.clear();
  }
}

export class EventGroup {
  /**
   * What waits, in the stream's order, in waiting.items[0, waiting.count): i >= 0 is held
   * frame i, and -1 - i is decoded[i], an event pushed. Typed and kept from batch to batch, so
   * that holding a frame allocates nothing.
   */
  private readonly waiting = new IntList();
  private decoded: OpenCodeEvent[] = [];
  private readonly held = new HeldFrames();
  private readonly defer: ReadonlySet<string>;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly rule: FollowRule | undefined,
    private readonly send: (events: OpenCodeEvent[]) => void,
    private readonly decode: DecodeFrame = () => undefined,
  ) {
    this.defer = new Set(rule && rule.batchMs > 0 ? rule.defer : []);
  }

  /** The types that may wait (none without a rule that groups). */
  get deferred(): ReadonlySet<string> {
    return this.defer;
  }

  /** Takes the stream's next event: it waits, or goes now with what waits before it. */
  push(ev: OpenCodeEvent): void {
    if (!this.defer.has(ev.type)) {
      this.flush(ev);
      return;
    }
    this.decoded.push(ev);
    this.wait(-this.decoded.length);
  }

  /**
   * Takes the stream's next frame, undecoded: data in bytes[start, end), of a type that may
   * wait (FrameTypes told it from its bytes). It is decoded when its batch goes.
   */
  hold(bytes: Buffer, start: number, end: number): void {
    if (this.defer.size === 0) {
      const ev = this.decode(bytes.toString("utf8", start, end));
      if (ev) this.push(ev);
      return;
    }
    this.wait(this.held.add(bytes, start, end));
  }

  /** Sends what waits (and last after it), in the stream's order; nothing when nothing waits. */
  flush(last?: OpenCodeEvent): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const events: (OpenCodeEvent | undefined)[] = [];
    /** type + "\0" + key → the index in events of the latest event with that key. */
    const latest = new Map<string, number>();
    const waiting = this.waiting.items;
    for (let i = 0; i < this.waiting.count; i++) {
      const w = waiting[i];
      const ev = w >= 0 ? this.decode(this.held.text(w)) : this.decoded[-1 - w];
      if (!ev) continue;
      const path = this.defer.has(ev.type) ? this.rule!.coalesce?.[ev.type] : undefined;
      const key = path === undefined ? undefined : keyAt(ev.properties, path);
      if (key !== undefined) {
        const k = `${ev.type}\u0000${key}`;
        const at = latest.get(k);
        if (at !== undefined) events[at] = undefined;
        latest.set(k, events.length);
      }
      events.push(ev);
    }
    this.forget();
    const out = events.filter((e): e is OpenCodeEvent => e !== undefined);
    if (last) out.push(last);
    if (out.length > 0) this.send(out);
  }

  /** Forgets what waits, unsent (the plugin stops). */
  drop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.forget();
  }

  private forget(): void {
    this.waiting.count = 0;
    if (this.decoded.length > 0) this.decoded = [];
    this.held.clear();
  }

  /** Puts w (as waiting holds it) last in what waits; the first to wait starts the batch's wait. */
  private wait(w: number): void {
    this.waiting.push(w);
    if (this.timer === undefined) {
      this.timer = setTimeout(() => this.flush(), this.rule!.batchMs);
      (this.timer as any).unref?.();
    }
  }
}
