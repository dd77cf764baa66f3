// Where the plugin runs the core: in a Worker of its own, or on OpenCode's thread.

/**
 * Whether the core runs in a Worker: where OpenCode's server listens (`opencode serve`, `--port`),
 * the Worker sends launches and notices to it straight (direct.ts); where it does not (the TUI
 * without --port, `opencode run`), every effect goes through the plugin's client on OpenCode's
 * thread, and a Worker would only add a trip through that thread's busy event loop: a notice
 * then took three to four times the floor's time (RATIONALE.md). ASYNCAGENTS_WORKER=true or
 * false decides instead.
 */
export function inWorker(env: string | undefined, serverListens: boolean): boolean {
  if (env === "false") return false;
  if (env === "true") return true;
  return serverListens;
}
