// asyncagents serve: the status API over the project's stored history, read-only, as
// host/cmd/asyncagents (serve) runs it: every answer is the core's (the http op), the event
// stream is fed by its sse.broadcast effects, and the history is followed as the plugin appends.

import { randomBytes } from "node:crypto";
import { closeSync, fstatSync, openSync, readdirSync, readFileSync, readSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  API_ERR_CORE_FAILED,
  API_ERR_LOGS_NO_OPENCODE,
  API_TOKEN_BYTES,
  DEFAULT_API_PORT,
  ENV_API_AUTH,
  FOLLOW_INTERVAL_MS,
  FOLLOW_WATCHED_INTERVAL_MS,
  HEARTBEAT_TIMER,
  MAX_REQUEST_BODY_BYTES,
  STOP_GRACE_MS,
  type Core,
  type CoreEvent,
  type Effect,
} from "../../bridge/core";
import { procStat } from "../histories";
import { LookSchedule } from "../history_watch";
import { removeOwnFile, writeOwnFile } from "../server";
import { health } from "../workers_client";
import { configure, openProject, storageEnv, type Flags } from "./project";

export async function serve(flags: Flags, out: (s: string) => void, err: (s: string) => void): Promise<void> {
  // flags.port: --port, else $ASYNCAGENTS_API_PORT, as the core read and checked them (cli.args)
  const started = new Date();
  const token = randomBytes(API_TOKEN_BYTES).toString("hex");
  const auth = process.env[ENV_API_AUTH] ?? "";
  const { project, core, storage } = await openProject(flags);
  const configError = configure(core, storage, { api: { token, auth, startedAt: started.getTime(), readOnly: true } });
  if (configError) err(configError + "\n");
  const streams = new Set<ServerResponse>();
  const timers = new Map<string, ReturnType<typeof setTimeout>>();
  const env = storageEnv(project, flags.port);
  const carryOut = (effects: Effect[]) => {
    for (const e of effects) {
      if (e.kind === "sse.broadcast") for (const s of streams) s.write(e.frame ?? "");
      else if (e.kind === "timer.set") {
        clearTimeout(timers.get(e.timerID!));
        timers.set(e.timerID!, setTimeout(() => step({ type: "timer.fired", timerID: e.timerID! }), e.delayMs ?? 0));
      } else if (e.kind === "timer.clear") {
        clearTimeout(timers.get(e.timerID!));
        timers.delete(e.timerID!);
      } else if (e.kind === "log") err(`asyncagents serve: ${e.level}: ${e.message}\n`);
      else if (e.kind === "worker.health" && e.remote) {
        // A read-only core asks each worker's health itself; the answer never holds the password.
        const done = (ok: boolean, result?: unknown, error?: string) => {
          if (!stopped) step({ type: "effect.done", effectID: e.id, ok, result, error });
        };
        health(e.remote).then((r) => done(true, r), (x) => done(false, undefined, (x as Error).message));
      }
    }
  };
  let stopped = false;
  const step = (event: CoreEvent) => carryOut(core.step(Date.now(), event));
  const restored = followAll(core, storage.dir, env, carryOut);

  const server = createServer((req, res) => void handle(core, req, res, streams, carryOut));
  const port = await listen(server, storage.apiPorts ?? [DEFAULT_API_PORT]);
  const url = `http://127.0.0.1:${port}`;
  const content = core.call({
    op: "server.file",
    procStat: procStat(),
    server: { port, pid: process.pid, startedAt: started.toISOString(), url, token, auth },
  }).serverFile!;
  const own = { path: storage.serverJSON!, content };
  writeOwnFile(own);
  out(core.call({ op: "serve.banner", banner: { restored, project, url, token, auth } }).report ?? "");
  step({ type: "start" }); // a read-only core asks each worker's health from here (worker.health)
  step({ type: "timer.fired", timerID: HEARTBEAT_TIMER });
  // The logs are looked at when their folder changes (history_watch.ts); serve writes none of its own.
  const looks = new LookSchedule(storage.dir, () => false, () => {
    try {
      followAll(core, storage.dir, env, carryOut);
    } catch (e) {
      err(`asyncagents serve: following the history: ${(e as Error).message}\n`);
    }
  }, { ms: FOLLOW_INTERVAL_MS, watchedMs: FOLLOW_WATCHED_INTERVAL_MS });
  await new Promise<void>((done) => {
    const stop = () => {
      process.off("SIGINT", stop).off("SIGTERM", stop);
      stopped = true;
      looks.stop();
      for (const t of timers.values()) clearTimeout(t);
      for (const s of streams) s.end();
      removeOwnFile(own);
      const grace = setTimeout(() => server.closeAllConnections(), STOP_GRACE_MS);
      server.close(() => {
        clearTimeout(grace);
        done();
      });
    };
    process.on("SIGINT", stop).on("SIGTERM", stop);
  });
}

async function handle(core: Core, req: IncomingMessage, res: ServerResponse, streams: Set<ServerResponse>, carryOut: (e: Effect[]) => void) {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers[k.toLowerCase()] = v;
  const target = req.url ?? "/";
  const q = target.indexOf("?");
  const path = q < 0 ? target : target.slice(0, q);
  const query = q < 0 ? "" : target.slice(q + 1);
  let body: string | undefined;
  if (req.method === "POST") {
    // The body, one byte past the core's limit at most: the core refuses a longer one.
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req as AsyncIterable<Buffer>) {
      if (size <= MAX_REQUEST_BODY_BYTES) chunks.push(c);
      size += c.length;
    }
    body = Buffer.concat(chunks).toString("utf8").slice(0, MAX_REQUEST_BODY_BYTES + 1);
  }
  let r;
  try {
    const entropy = req.method === "POST" ? randomBytes(32).toString("hex") : undefined;
    const port = req.socket.localPort ?? 0;
    const answer = core.call({ op: "http", now: Date.now(), http: { method: req.method ?? "GET", port, path, query, headers, subscribers: streams.size, entropy, body } });
    carryOut(answer.effects ?? []);
    r = answer.http!;
  } catch {
    res.writeHead(500, { "Content-Type": "application/json; charset=utf-8" }).end(JSON.stringify({ error: API_ERR_CORE_FAILED }));
    return;
  }
  if (r.stream) {
    res.writeHead(r.status, r.headers);
    res.write(r.body ?? "");
    streams.add(res);
    res.on("close", () => streams.delete(res));
    return;
  }
  if (r.asset) {
    let page: Buffer | undefined;
    try {
      page = readFileSync(join(dirname(fileURLToPath(import.meta.url)), "dashboard.html"));
    } catch {}
    if (!page) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(r.status, r.headers).end(page);
    return;
  }
  if (r.logs) {
    res.writeHead(503, { ...r.headers, "Content-Type": "application/json; charset=utf-8" }).end(JSON.stringify({ error: API_ERR_LOGS_NO_OPENCODE }));
    return;
  }
  res.writeHead(r.status, r.headers).end(r.status === 204 ? undefined : (r.body ?? ""));
}

/** Binds 127.0.0.1 on the first free port of ports, then on any port. */
async function listen(server: Server, ports: number[]): Promise<number> {
  let last: unknown;
  for (const p of [...ports, 0]) {
    try {
      await new Promise<void>((ok, fail) => {
        server.once("error", fail);
        server.listen(p, "127.0.0.1", () => {
          server.off("error", fail);
          ok();
        });
      });
      return (server.address() as { port: number }).port;
    } catch (e) {
      last = e;
    }
  }
  throw last;
}

/**
 * Looks at every log the core names and applies what each gained since the last look (the core's
 * follow.look says from where, and whether all of it); returns how many tasks the logs read hold.
 */
function followAll(core: Core, dir: string, env: ReturnType<typeof storageEnv>, carryOut: (e: Effect[]) => void): number {
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  const plan = core.call({ op: "histories", env, files: names }).histories ?? {};
  let total = 0;
  for (const name of plan.follow ?? []) {
    let fd: number | undefined;
    try {
      fd = openSync(join(dir, name), "r");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    }
    try {
      const st = fd === undefined ? undefined : fstatSync(fd);
      const stat = st && { size: st.size, dev: st.dev, ino: st.ino };
      const look = core.call({ op: "follow.look", now: Date.now(), source: name, stat });
      carryOut(look.effects ?? []);
      if (fd === undefined || !st || !look.follow?.read) continue;
      const from = look.follow.from ?? 0;
      const data = Buffer.alloc(Math.max(st.size - from, 0));
      let got = 0;
      while (got < data.length) {
        const n = readSync(fd, data, got, data.length - got, from + got);
        if (n === 0) break;
        got += n;
      }
      const indexName = look.follow.first ? plan.indexes?.[name] : undefined;
      let index: Uint8Array | undefined;
      if (indexName) {
        try {
          index = readFileSync(join(dir, indexName));
        } catch {}
      }
      const r = core.call({ op: "follow", now: Date.now(), source: name, history: new Uint8Array(data.subarray(0, got)), index });
      carryOut(r.effects ?? []);
      total += r.restore?.restored ?? 0;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }
  return total;
}
