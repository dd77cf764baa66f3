// Stopping the effects the core asks for when its thread is about to end (OpenCode disposed the
// plugin, or a signal ends the process).
//
// The effects in flight finish first: a request to OpenCode cut by the thread's end (the Worker
// terminated) is one OpenCode interrupts half-way. No new one starts: a request sent now would
// run in an instance being disposed, whose caches OpenCode 1.18 refills from whatever runs there
// (an interrupted config load stays, and the project then answers 503 until OpenCode restarts:
// docs/rationale/opencode.md). A held effect is as if the plugin had stopped just before it: the
// next plugin takes over from the history (a notice from its outbox).

import type { Effect } from "../bridge/core";
import type { Perform } from "./effects";

/** perform, and the way to stop it. */
export interface DrainablePerform extends Perform {
  /** Lets the effects in flight finish (graceMs at most) and holds every later one for good. */
  drain(graceMs: number): Promise<void>;
}

export function drainable(perform: Perform): DrainablePerform {
  const inFlight = new Set<Promise<unknown>>();
  let draining = false;
  const gated = (e: Effect): Promise<unknown> => {
    if (draining) return new Promise(() => {});
    const done = perform(e);
    const settled: Promise<unknown> = done.then(
      () => inFlight.delete(settled),
      () => inFlight.delete(settled),
    );
    inFlight.add(settled);
    return done;
  };
  return Object.assign(gated, {
    drain: async (graceMs: number) => {
      draining = true;
      if (inFlight.size === 0) return;
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([Promise.all(inFlight), new Promise((r) => (timer = setTimeout(r, graceMs)))]);
      clearTimeout(timer);
    },
  });
}
