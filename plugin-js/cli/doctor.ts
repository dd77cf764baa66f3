// asyncagents doctor: says whether the plugin loaded for this project. It gathers the facts (the
// server files and whether their servers answer, OpenCode's and the plugin's config files,
// OpenCode's version) and the core writes the report (core/doctor.go).

import { spawnSync } from "node:child_process";
import { configure, liveServers, openProject, readFiles, serverFacts, storageEnv, type Flags } from "./project";

/** doctor's exit 1 (main.ts): its report named what stops the plugin here, and the fix. */
export class DoctorTrouble extends Error {}

export async function doctor(flags: Flags, out: (s: string) => void): Promise<void> {
  const { project, core, storage } = await openProject(flags);
  const paths = core.call({ op: "doctor.files", env: storageEnv(project) }).paths ?? [];
  const configError = configure(core, storage);
  const servers = serverFacts(storage.serverDir);
  const probes: Record<string, string> = {};
  const health: Record<string, string> = {};
  for (const s of liveServers(core, storage.serverDir)) {
    try {
      const res = await fetch(`http://127.0.0.1:${s.port}/v1/health`, { signal: AbortSignal.timeout(5_000) });
      probes[s.url] = res.ok ? "" : `GET /v1/health: ${res.status}`;
      health[s.url] = await res.text().catch(() => ""); // it answered: a body cut short says no more
    } catch (err) {
      probes[s.url] = (err as Error).message;
    }
  }
  const oc = spawnSync("opencode", ["--version"], { encoding: "utf8", timeout: 30_000 });
  const openCodeError = oc.error ? oc.error.message : oc.status !== 0 ? `exit ${oc.status}: ${oc.stderr.trim()}` : "";
  const notFound = (oc.error as NodeJS.ErrnoException | undefined)?.code === "ENOENT";
  const facts = {
    project,
    openCodeNotFound: notFound || undefined,
    openCodeVersion: openCodeError ? undefined : oc.stdout.trim(),
    openCodeError: (!notFound && openCodeError) || undefined,
    files: readFiles(paths),
    ...servers,
    probes,
    health,
    configError: configError || undefined,
  };
  const r = core.call({ op: "doctor", doctor: facts });
  out(r.report ?? "");
  // Exit 1 (main.ts): the report named something that stops the plugin here.
  if (r.trouble) throw new DoctorTrouble();
}
