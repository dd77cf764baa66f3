// asyncagents workers: the running plugin's workers (health, load, version) from its GET
// /v1/workers, as host/cmd/asyncagents (workers) prints them; the core writes the table.

import type { ServerFile } from "../../bridge/core";
import { liveServers, openProject, type Flags } from "./project";

export async function workers(flags: Flags, out: (s: string) => void, err: (s: string) => void): Promise<void> {
  const { project, core, storage } = await openProject(flags);
  const live = liveServers(core, storage.serverDir);
  // The core lists the plugin's live server first: it follows the workers; serve's read-only
  // one only reads the config.
  const f = live[0];
  if (!f) throw new Error(`no running asyncagents server for ${project}: start OpenCode there (only a running plugin reaches its workers)`);
  if (f.readOnly) err(`from the read-only server of asyncagents serve (pid ${f.pid}; no live plugin server was found)\n`);
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
