// What every command of the npm CLI starts with, as host/cmd/asyncagents/project.go does for the
// Go one: the project's real path, the core loaded from the package, and where the core says the
// project's files are.

import { readdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { compile, Core, type CLIArgs, type ConfigFile, type ServerFile, type Storage, type StorageEnv } from "../../bridge/core";
import { procInfo } from "../histories";
import { projectPath } from "../shared";

export interface Flags {
  project: string;
  wasm?: string;
  print: boolean;
  json?: boolean;
  port?: string;
}

/** The flags of a command line the core read (the cli.args op): --project defaults to the cwd. */
export function flagsOf(a: CLIArgs): Flags {
  return { project: a.project || process.cwd(), wasm: a.wasm || undefined, port: a.port || undefined, print: !!a.print, json: !!a.json };
}

export function storageEnv(project: string, port = ""): StorageEnv {
  return {
    xdgDataHome: process.env.XDG_DATA_HOME || undefined,
    xdgConfigHome: process.env.XDG_CONFIG_HOME || undefined,
    home: homedir(),
    directory: project,
    apiPort: port || undefined,
    pid: process.pid,
  };
}

/** The core last loaded, by the path asked for: the one that read the command line runs it too. */
let lastLoaded: { path?: string; core: Core } | undefined;

/** The core module: --wasm, $ASYNCAGENTS_WASM, or the one beside this program in the package. */
export async function loadCore(path?: string): Promise<Core> {
  if (lastLoaded && lastLoaded.path === path) return lastLoaded.core;
  const core = await instantiateCore(path);
  lastLoaded = { path, core };
  return core;
}

async function instantiateCore(path?: string): Promise<Core> {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [path, process.env.ASYNCAGENTS_WASM, join(here, "asyncagents.wasm")].filter((p): p is string => !!p);
  for (const p of candidates) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(p);
    } catch {
      continue;
    }
    return Core.instantiate(await compile(new Uint8Array(bytes)), (fd, text) => process.stderr.write(text + "\n"));
  }
  throw new Error("the core module asyncagents.wasm was not found: pass --wasm or set ASYNCAGENTS_WASM");
}

export interface Opened {
  project: string;
  core: Core;
  storage: Storage;
}

export async function openProject(flags: Flags): Promise<Opened> {
  const project = projectPath(resolve(flags.project));
  const core = await loadCore(flags.wasm);
  const storage = core.call({ op: "storage", env: storageEnv(project, flags.port) }).storage!;
  return { project, core, storage };
}

/** Starts the core with the project's config files, as the plugin does; returns init's configError. */
export function configure(core: Core, storage: Storage, config: Record<string, unknown> = {}): string {
  const files = readFiles(storage.configFiles ?? []);
  return core.init(config, files).configError ?? "";
}

/** The files of paths that exist: their text, or why they could not be read. */
export function readFiles(paths: string[]): ConfigFile[] {
  const out: ConfigFile[] = [];
  for (const path of paths) {
    try {
      out.push({ path, text: readFileSync(path, "utf8") });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") out.push({ path, text: "", error: (err as Error).message });
    }
  }
  return out;
}

/** The project's server files and what is known of their pids, for the servers and doctor ops. */
export function serverFacts(serverDir: string): { serverFiles: ConfigFile[]; procs: ReturnType<typeof procInfo>[] } {
  let names: string[] = [];
  try {
    names = readdirSync(serverDir).filter((n) => n.endsWith(".json"));
  } catch {}
  const serverFiles = readFiles(names.map((n) => join(serverDir, n)));
  const pids = names.map((n) => Number(n.slice(0, -5))).filter((n) => Number.isInteger(n) && n > 0);
  return { serverFiles, procs: pids.map(procInfo) };
}

/** The live servers of the project, in the core's order (the core's servers op). */
export function liveServers(core: Core, serverDir: string): ServerFile[] {
  return core.call({ op: "servers", doctor: serverFacts(serverDir) }).servers ?? [];
}

/**
 * The server command talks to and, in words, which one it is, as the core picks it; throws the
 * core's words when none runs for project.
 */
export function pickServer(core: Core, serverDir: string, command: string, project: string): { server: ServerFile; name: string } {
  const r = core.call({ op: "servers", command, doctor: { ...serverFacts(serverDir), project } });
  return { server: r.servers![0], name: r.report ?? "" };
}

/** Throws why a request to f (the op's: dashboard.link, workers.table) got no answer, in the core's words. */
export function askFailed(core: Core, op: string, f: ServerFile, failure: string): never {
  core.call({ op, server: f, failure }); // answers ok: false, which call throws
  throw new Error(`${op}: the core took "${failure}" for no failure`);
}

/**
 * Sends a command's request to f's status API (with the server file's token, when it has one):
 * the body of a 200 answer, or why there is none, for the core to word (askFailed).
 */
export async function askServer(f: ServerFile, path: string, method = "GET"): Promise<{ body: string } | { failure: string }> {
  let res: Response;
  try {
    res = await fetch(`http://127.0.0.1:${f.port}${path}`, {
      method,
      headers: f.token ? { Authorization: `Bearer ${f.token}` } : {},
      signal: AbortSignal.timeout(10_000),
    });
  } catch (err) {
    return { failure: (err as Error).message };
  }
  const body = await res.text();
  return res.status === 200 ? { body } : { failure: `${res.status} ${body}` };
}
