// asyncagents ls: the project's tasks as a table, from every log of its history, as
// host/cmd/asyncagents (ls) prints it; the core writes the table.

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { configure, openProject, storageEnv, type Flags } from "./project";

export async function ls(flags: Flags, out: (s: string) => void, err: (s: string) => void): Promise<void> {
  const { project, core, storage } = await openProject(flags);
  const configError = configure(core, storage);
  if (configError) err(configError + "\n");
  let names: string[] = [];
  try {
    names = readdirSync(storage.dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  const plan = core.call({ op: "histories", env: storageEnv(project), files: names }).histories ?? {};
  const follow = plan.follow ?? [];
  // Every process that served the project wrote a log of its own: read as one. A log's index
  // fits it alone, so it is read when there is one log.
  const parts: Buffer[] = [];
  for (const name of follow) {
    let log: Buffer;
    try {
      log = readFileSync(join(storage.dir, name));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw e;
    }
    const last = parts.at(-1);
    if (last && last.length > 0 && last[last.length - 1] !== 0x0a) parts.push(Buffer.from("\n"));
    parts.push(log);
  }
  let index: Uint8Array | undefined;
  const indexName = follow.length === 1 ? plan.indexes?.[follow[0]!] : undefined;
  if (indexName) {
    try {
      index = readFileSync(join(storage.dir, indexName));
    } catch {}
  }
  const now = Date.now();
  const r = core.call({ op: "restore", now, history: new Uint8Array(Buffer.concat(parts)), index });
  out(core.call({ op: "table", now }).table ?? "");
  const corrupt = r.restore?.corrupt ?? 0;
  if (corrupt > 0) out(`(${corrupt} corrupt history lines skipped)\n`);
}
