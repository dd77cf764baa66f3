// A timing profile for the benchmark: with ASYNCAGENTS_PROFILE set to a file path, each hop of a
// launch and of a notice appends one JSON line {t, hop, call?, task?, session?} to that file (t in
// ms since the epoch, with fractions, comparable across the plugin's threads). `make bench`
// reads it to show which hop owns the time. Unset, it costs one branch per hop.

import { appendFileSync } from "node:fs";
import type { Effect } from "../bridge/core";

// Read through a computed key: `bun build` may inline a literal process.env.NAME.
const file = ((name: string) => process.env[name])("ASYNCAGENTS_PROFILE") || undefined;

export const profiling = file !== undefined;

export interface HopFields {
  call?: string;
  task?: string;
  session?: string;
}

/** Records hop now, if profiling. Never throws. */
export function hop(name: string, fields: HopFields): void {
  if (!file) return;
  try {
    appendFileSync(file, JSON.stringify({ t: performance.timeOrigin + performance.now(), hop: name, ...fields }) + "\n");
  } catch {}
}

/**
 * Records, if profiling, that an event of a session's turn reached hop's thread: a session's
 * idle ("idle"), and an assistant message completed (name: "event.seen" on OpenCode's thread,
 * "core.seen" on the core's).
 */
export function profileSeen(name: string, event: any): void {
  if (!file) return;
  const p = event?.properties;
  if (event?.type === "session.idle" && name === "core.seen") hop("idle", { session: p?.sessionID });
  else if (event?.type === "message.updated" && p?.info?.role === "assistant" && p.info.time?.completed) hop(name, { session: p.info.sessionID });
}

/** Records, if profiling, the hops of an effect sent to OpenCode: a child created, prompted, a notice sent. */
export function profileSent(e: Effect): void {
  if (e.kind === "session.create") hop("session.create.sent", { task: e.taskID });
  else if (e.kind === "session.promptAsync" && e.notice) {
    // Notices ready together for one parent go as one message: each task's notice was sent.
    for (const task of e.taskIDs ?? [e.taskID]) hop("notice.sent", { task, session: e.sessionID });
  }
  else if (e.kind === "session.promptAsync" && e.taskID) hop("prompt.sent", { task: e.taskID, session: e.sessionID });
}
