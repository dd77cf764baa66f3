// asyncagents workers: the running plugin's workers (health, load, version) from its GET
// /v1/workers, as host/cmd/asyncagents (workers) prints them; the core writes the table.

import type { ServerFile } from "../../bridge/core";
import { askFailed, openProject, pickServer, type Flags } from "./project";

export async function workers(flags: Flags, out: (s: string) => void, err: (s: string) => void): Promise<void> {
  const { project, core, storage } = await openProject(flags);
  // The plugin's live server comes first: it follows the workers' streams; serve's read-only one
  // follows none, and shows its own asks of each worker's health (the table says so, and the
  // core's line on stderr).
  const { server: f, name } = pickServer(core, storage.serverDir, "workers", project);
  if (name) err(name + "\n"); // a read-only serve: the health it shows is its own asks
  const got = await getWorkers(f);
  if ("failure" in got) askFailed(core, "workers.table", f, got.failure);
  const { body } = got;
  if (flags.json) {
    out(body.trim() + "\n");
    return;
  }
  out(core.call({ op: "workers.table", now: Date.now(), history: body }).table ?? "");
}

/** GET /v1/workers of f: its answer, or why none came (the core words the error). */
async function getWorkers(f: ServerFile): Promise<{ body: string } | { failure: string }> {
  let res: Response;
  try {
    res = await fetch(`http://127.0.0.1:${f.port}/v1/workers`, {
      headers: f.token ? { Authorization: `Bearer ${f.token}` } : {},
      signal: AbortSignal.timeout(10_000),
    });
  } catch (e) {
    return { failure: (e as Error).message };
  }
  const body = await res.text();
  return res.status === 200 ? { body } : { failure: `${res.status} ${body}` };
}
