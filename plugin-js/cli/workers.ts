// asyncagents workers: the running plugin's workers (health, load, version) from its GET
// /v1/workers, as host/cmd/asyncagents (workers) prints them; the core writes the table.

import type { ServerFile } from "../../bridge/core";
import { openProject, pickServer, type Flags } from "./project";

export async function workers(flags: Flags, out: (s: string) => void, err: (s: string) => void): Promise<void> {
  const { project, core, storage } = await openProject(flags);
  // The plugin's live server comes first: it follows the workers' streams; serve's read-only one
  // follows none, and shows its own asks of each worker's health (the table says so).
  const { server: f, name } = pickServer(core, storage.serverDir, "workers", project);
  if (f.readOnly) err(`from ${name}\n`);
  const body = await getWorkers(f);
  if (flags.json) {
    out(body.trim() + "\n");
    return;
  }
  out(core.call({ op: "workers.table", now: Date.now(), history: body }).table ?? "");
}

async function getWorkers(f: ServerFile): Promise<string> {
  const origin = `http://127.0.0.1:${f.port}`;
  let res: Response;
  try {
    res = await fetch(origin + "/v1/workers", {
      headers: f.token ? { Authorization: `Bearer ${f.token}` } : {},
      signal: AbortSignal.timeout(10_000),
    });
  } catch (e) {
    throw new Error(`the server at ${origin} did not list its workers: ${(e as Error).message}`);
  }
  const body = await res.text();
  if (res.status !== 200) throw new Error(`the server at ${origin} did not list its workers: ${res.status} ${body.trim()}`);
  return body;
}
