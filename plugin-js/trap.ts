// The one rule a host keeps about traps itself (ABI.md, "Traps"), worded as the Go host's
// restartFailed (host/recover.go): when the new instance cannot be made, initialised or restored,
// there is no core left to ask what to do, so the plugin stops.

export function restartFailed(err: unknown): string {
  const why = err instanceof Error ? err.message : String(err);
  return `asyncagents stopped: its core failed, and failed again while restarting (${why}). Background tasks are no longer tracked; restart OpenCode to start it again.`;
}
