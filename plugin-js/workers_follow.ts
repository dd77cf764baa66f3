// Follows each worker's `/global/event` stream (CONTRACT: worker.follow): one stream per worker,
// reconnected with backoff, a silent stream counted as dropped, its OpenCode events fed to the core
// tagged with the worker, and the stream's state fed as worker.state. No decisions: the core
// decides what a drop means for the tasks on that worker.

import manifest from "../dist/manifest.json";
import type { CoreEvent, FollowRule, OpenCodeEvent } from "../bridge/types";
import { reason, request, WorkerRequestError, type Remote } from "./workers_client";
import { FrameSplitter, FrameTypes, type HoldFrame } from "./workers_frames";
import { EventGroup } from "./workers_group";
import { RawStreamUnsupported, rawStreamable, streamRaw } from "./workers_stream";

export interface FollowTiming {
  /** The first wait before a reconnect; it doubles after each failure. */
  firstBackoffMs: number;
  maxBackoffMs: number;
  /** A stream silent this long counts as dropped (OpenCode sends a heartbeat every 10 s). */
  silenceMs: number;
  /** Told each wait before a reconnect (tests read the backoff from it, not from the clock). */
  onBackoff?: (ms: number) => void;
}

/** 0.5 s doubling to 5 s; two missed heartbeats and a half (25 s) mean the stream is gone. */
export const FOLLOW_TIMING: FollowTiming = { firstBackoffMs: 500, maxBackoffMs: 5_000, silenceMs: 25_000 };

/** Frames that carry nothing for the core: the stream's own, and OpenCode's internal sync copies. */
const SKIPPED = new Set(["server.connected", "server.heartbeat", "sync"]);
/** The event types the core takes from OpenCode (the same as the plugin's event hook feeds). */
const SUBSCRIBED: ReadonlySet<string> = new Set<string>(manifest.subscribe);

export type Feed = (ev: CoreEvent) => void;

/** The workers (by URL) whose server framed a plain socket's stream: read with fetch since. */
const framedStreams = new Set<string>();

/** A frame of /global/event: the payload of one directory instance's event. */
export interface GlobalFrame {
  directory?: string;
  payload?: { type?: string; properties?: any };
}

/** Parses one frame's data; undefined when it is not a frame of /global/event. */
export function parseFrame(data: string): GlobalFrame | undefined {
  try {
    const f = JSON.parse(data);
    return f && typeof f === "object" && f.payload && typeof f.payload.type === "string" ? f : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Opens remote's /global/event and hands each frame to onFrame until the stream ends, fails or
 * signal aborts; armed with silenceMs, a stream (or a connect) that stays silent that long is
 * ended; given types, only frames that may be of those types are parsed and handed on, and those
 * it holds go to onHold undecoded (FrameTypes). Resolves with the reason it ended, in plain words.
 */
export async function streamEvents(
  remote: Remote,
  signal: AbortSignal,
  onFrame: (f: GlobalFrame) => void,
  silenceMs: number,
  types?: FrameTypes,
  onHold?: HoldFrame,
): Promise<string> {
  const ac = new AbortController();
  const onStop = () => ac.abort();
  signal.addEventListener("abort", onStop, { once: true });
  let silent = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // The time of the last bytes; the timer, when it fires, waits out what is left of silenceMs
  // since then. Bytes come many times a second: a timer made again for each would be work.
  let lastBytes = performance.now();
  const wait = (ms: number) => {
    timer = setTimeout(() => {
      const quiet = performance.now() - lastBytes;
      if (quiet < silenceMs) return wait(silenceMs - quiet);
      silent = true;
      ac.abort();
    }, ms);
    (timer as any).unref?.();
  };
  wait(silenceMs);
  const splitter = new FrameSplitter(types, (data) => {
    const frame = parseFrame(data);
    if (frame) onFrame(frame);
  }, onHold);
  const onBytes = (bytes: Uint8Array) => {
    lastBytes = performance.now();
    splitter.push(bytes);
  };
  try {
    if (rawStreamable(remote) && !framedStreams.has(remote.url)) {
      try {
        await streamRaw(remote, "global/event", ac.signal, onBytes);
        if (silent) throw new Error("silent");
        return "the event stream ended";
      } catch (err) {
        if (!(err instanceof RawStreamUnsupported)) throw err;
        framedStreams.add(remote.url); // this server frames its streams: fetch reads them from now on
      }
    }
    const res = await request(remote, "global/event", { signal: ac.signal });
    if (!res.body) return "the event stream has no body";
    const reader = res.body.getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      onBytes(value);
    }
    return "the event stream ended";
  } catch (err) {
    if (silent) return `no event for ${silenceMs / 1000} s`;
    return err instanceof WorkerRequestError ? err.message : reason(err);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener("abort", onStop);
    ac.abort();
  }
}

/** The event streams of the workers, one per worker, until stop. */
export class WorkerFollowers {
  private readonly streams = new Map<string, AbortController>();
  /** The state last fed for each worker followed. */
  private readonly states = new Map<string, { up: boolean; error?: string }>();
  private stopped = false;

  constructor(
    private readonly feed: Feed,
    private readonly timing: FollowTiming = FOLLOW_TIMING,
  ) {}

  /**
   * Starts following worker, its events grouped as rule says (each alone without one); a worker
   * already followed is left as it is.
   */
  follow(worker: string, remote: Remote, rule?: FollowRule): void {
    if (this.stopped) return;
    if (this.streams.has(worker)) {
      // A core that asks again is a new instance (after a trap): it knows nothing of the stream
      // yet, and hears its state as the first one did.
      const last = this.states.get(worker);
      if (last) this.feed({ type: "worker.state", worker, ...last });
      return;
    }
    const ac = new AbortController();
    this.streams.set(worker, ac);
    void this.run(worker, remote, ac.signal, rule);
  }

  /**
   * Closes worker's stream and forgets it (the worker rests, core/workers_rest.go): nothing more
   * of it is fed, not even its end, and a later follow opens a new one.
   */
  unfollow(worker: string): void {
    this.streams.get(worker)?.abort();
    this.streams.delete(worker);
    this.states.delete(worker);
  }

  /** Ends every stream and follows no more (the plugin stops or OpenCode disposes it). */
  stop(): void {
    this.stopped = true;
    for (const ac of this.streams.values()) ac.abort();
    this.streams.clear();
  }

  private async run(worker: string, remote: Remote, stop: AbortSignal, rule?: FollowRule): Promise<void> {
    const { firstBackoffMs, maxBackoffMs, silenceMs } = this.timing;
    // The types the core reads from a worker (its rule's; without one, what it takes locally),
    // and the frame types read from the stream: those, and the stream's own connect.
    const types: ReadonlySet<string> = rule?.types ? new Set(rule.types) : SUBSCRIBED;
    /** The event a frame carries, when the core reads it. */
    const fed = (frame: GlobalFrame | undefined): OpenCodeEvent | undefined => {
      const type = frame?.payload?.type;
      if (!type || SKIPPED.has(type) || !types.has(type) || stop.aborted) return undefined;
      return frame!.payload as OpenCodeEvent;
    };
    const group = new EventGroup(rule, (events) => {
      if (stop.aborted) return;
      this.feed(events.length === 1 ? { type: "opencode", worker, event: events[0] } : { type: "opencode", worker, events });
    }, (data) => fed(parseFrame(data)));
    stop.addEventListener("abort", () => group.drop(), { once: true });
    const frameTypes = new FrameTypes([...types, "server.connected"], group.deferred);
    const hold: HoldFrame = (bytes, start, end) => group.hold(bytes, start, end);
    let delay = firstBackoffMs;
    // The state last fed: a stream that keeps failing the same way is said once.
    let last = "";
    const state = (up: boolean, error = "") => {
      const key = up ? "up" : `down:${error}`;
      if (key === last || stop.aborted) return;
      last = key;
      this.states.set(worker, { up, ...(error && { error }) });
      this.feed({ type: "worker.state", worker, up, ...(error && { error }) });
    };
    while (!stop.aborted) {
      const why = await streamEvents(remote, stop, (frame) => {
        if (frame.payload!.type === "server.connected") {
          delay = firstBackoffMs;
          state(true);
          return;
        }
        const ev = fed(frame);
        if (ev) group.push(ev);
      }, silenceMs, frameTypes, hold);
      if (stop.aborted) return;
      group.flush(); // what came before the drop goes before it
      state(false, why);
      this.timing.onBackoff?.(delay);
      await sleep(delay, stop);
      delay = Math.min(delay * 2, maxBackoffMs);
    }
  }
}

/** Waits ms, or less when signal aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    (t as any).unref?.();
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
