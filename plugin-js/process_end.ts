// What the plugin leaves in the world outside OpenCode's process (the status API's server.json,
// the tmux panes attached to children) goes when the process ends. The main thread owns the
// process's signals (a Worker gets none), so everything is tied to them here.

import { STOP_GRACE_MS } from "../bridge/types";

/** Something the process's end stops: the status API's server (here or in the Worker), the tmux panes. */
export interface Stoppable {
  /** On SIGINT or SIGTERM: stops gracefully, within graceMs. */
  stop(graceMs?: number): Promise<void>;
  /** On 'exit': what must not outlive the process, done synchronously (all an exit handler can do). */
  atExit(): void;
}

/** What to stop when the process ends, each with its grace period. */
const stopWithProcessServers = new Map<Stoppable, number>();
let processHooked = false;

/** Unties s from the process's end: OpenCode disposed the plugin, which stopped s itself. */
export function forgetAtProcessEnd(s: Stoppable): void {
  stopWithProcessServers.delete(s);
}

/**
 * Ties s to the process's end. On 'exit', atExit runs. On SIGINT or SIGTERM everything tied
 * stops gracefully (see stop), and then, if nobody else listens for the signal, the signal is
 * raised again so it ends the process as it would have without the plugin: OpenCode is never
 * kept alive longer than the grace period. A second signal during it finds no listener of ours
 * and ends the process at once. Hooks the signals on its first call only: a plugin with no API
 * and no pane leaves them alone.
 */
export function stopWithProcess(s: Stoppable, graceMs = STOP_GRACE_MS): void {
  stopWithProcessServers.set(s, graceMs);
  if (processHooked) return;
  processHooked = true;
  process.once("exit", () => {
    for (const s of stopWithProcessServers.keys()) {
      try {
        s.atExit();
      } catch {}
    }
  });
  for (const sig of ["SIGINT", "SIGTERM"] as const) {
    process.once(sig, () => {
      const all = [...stopWithProcessServers];
      stopWithProcessServers.clear();
      void Promise.allSettled(all.map(([s, grace]) => s.stop(grace))).then(() => {
        if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
      });
    });
  }
}
