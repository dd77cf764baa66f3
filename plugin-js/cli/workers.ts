// asyncagents workers: the running plugin's workers (health, load, version) from its GET
// /v1/workers, as host/cmd/asyncagents (workers) prints them; the core writes the table.

import { askFailed, askServer, openProject, pickServer, type Flags } from "./project";

export async function workers(flags: Flags, out: (s: string) => void, err: (s: string) => void): Promise<void> {
  const { project, core, storage } = await openProject(flags);
  // The plugin's live server comes first: it follows the workers' streams; serve's read-only one
  // follows none, and shows its own asks of each worker's health (the table says so, and the
  // core's line on stderr).
  const { server: f, name } = pickServer(core, storage.serverDir, "workers", project);
  if (name) err(name + "\n"); // a read-only serve: the health it shows is its own asks
  const got = await askServer(f, "/v1/workers");
  if ("failure" in got) askFailed(core, "workers.table", f, got.failure);
  const { body } = got;
  if (flags.json) {
    out(body.trim() + "\n");
    return;
  }
  out(core.call({ op: "workers.table", now: Date.now(), history: body }).table ?? "");
}
