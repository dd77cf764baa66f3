// The status API's HTTP server inside the plugin: Bun.serve on 127.0.0.1, every answer computed
// by the core (the http op), Server-Sent Events fed by the core's sse.broadcast effects. This file
// only binds, writes server.json and moves bytes.

import { mkdirSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

export interface CoreHTTPRequest {
  method: string;
  /** The port this server listens on: the core judges the request's Origin by it. */
  port: number;
  path: string;
  query: string;
  headers: Record<string, string>;
  subscribers: number;
}
export interface CoreHTTPResponse {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  stream?: boolean;
  logs?: string;
  /** A file this host holds, to answer with as the body ("dashboard": the dashboard's page). */
  asset?: string;
}

export interface ApiDeps {
  http(req: CoreHTTPRequest): CoreHTTPResponse;
  logs(sessionID: string): Promise<unknown>;
  log(level: string, message: string): void;
  /** The bytes of an asset the core names, or undefined when this host does not have it. */
  asset?(name: string): Uint8Array<ArrayBuffer> | undefined;
}

const encoder = new TextEncoder();

/** How long a stop lets the answers in flight finish before it answers them 503 itself. */
export const STOP_GRACE_MS = 2000;

const JSON_HEADERS = { "Content-Type": "application/json; charset=utf-8" };
const STOPPED = Symbol("stopped");

/** Resolves true when p settles within ms, false otherwise. */
export async function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([p.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

export class ApiServer {
  private server?: ReturnType<typeof Bun.serve>;
  private readonly streams = new Set<ReadableStreamDefaultController<Uint8Array>>();
  private serverJSON?: string;
  private stopping?: Promise<void>;
  /** Ends each answer still awaiting OpenCode when the grace period is over. */
  private readonly waiting = new Set<() => void>();

  constructor(private readonly deps: ApiDeps) {}

  /** How many event streams are open. */
  get subscribers(): number {
    return this.streams.size;
  }

  /**
   * Binds 127.0.0.1 on the first free port of `ports` (then any port), and writes server.json
   * (mode 0600: it holds the token).
   */
  start(ports: number[], serverJSON: string, token: string, startedAt: number): number | undefined {
    if (this.stopping) return undefined; // stopped (a dispose) before the core was configured
    for (const port of [...ports, 0]) {
      try {
        this.server = Bun.serve({
          hostname: "127.0.0.1",
          port,
          idleTimeout: 0, // event streams stay open between heartbeats
          fetch: (req) => this.handle(req),
        });
        break;
      } catch {
        // taken: try the next one
      }
    }
    if (!this.server) return undefined;
    const url = `http://127.0.0.1:${this.server.port}`;
    mkdirSync(dirname(serverJSON), { recursive: true, mode: 0o700 });
    writeFileSync(
      serverJSON,
      JSON.stringify({ port: this.server.port, pid: process.pid, startedAt: new Date(startedAt).toISOString(), url, token }, null, 2),
      { mode: 0o600 },
    );
    this.serverJSON = serverJSON;
    return this.server.port;
  }

  /** Sends a frame to every open event stream; a subscriber that cannot keep up is dropped. */
  broadcast(frame: string): void {
    const bytes = encoder.encode(frame);
    for (const c of this.streams) {
      if (c.desiredSize !== null && c.desiredSize <= 0) {
        this.streams.delete(c);
        try {
          c.close();
        } catch {}
        continue;
      }
      try {
        c.enqueue(bytes);
      } catch {
        this.streams.delete(c);
      }
    }
  }

  /** Removes server.json at once. Synchronous, so an 'exit' handler can call it. */
  removeServerJSON(): void {
    removeFile(this.serverJSON);
    this.serverJSON = undefined;
  }

  /** What the process's 'exit' does for this server (see stopWithProcess): server.json goes. */
  atExit(): void {
    this.removeServerJSON();
  }

  /**
   * Stops gracefully: server.json goes at once, event streams end (they never go idle), no new
   * connection is accepted and a request on a connection kept alive gets 503; the answers in
   * flight (a task's logs, awaiting OpenCode) may finish for graceMs at most, then those still
   * waiting are answered 503. Resolves when the server is down; a second call gets the same
   * promise.
   */
  stop(graceMs = STOP_GRACE_MS): Promise<void> {
    this.stopping ??= this.shutdown(graceMs);
    return this.stopping;
  }

  private async shutdown(graceMs: number): Promise<void> {
    this.removeServerJSON();
    for (const c of this.streams) {
      try {
        c.close();
      } catch {}
    }
    this.streams.clear();
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    const drained = server.stop(false).then(
      () => true,
      () => true,
    );
    if (await within(drained, graceMs)) return;
    // Answers still awaiting OpenCode end with a 503 of their own. (Bun's stop(true) after a
    // stop(false) does not reliably cut a request whose handler is still pending, so they are
    // not left to it; it only takes what might remain after the 503s.)
    const late = this.waiting.size;
    for (const end of this.waiting) end();
    this.deps.log("warn", `asyncagents: the status API gave up on ${late} answer(s) still awaiting OpenCode ${graceMs} ms after it was told to stop`);
    if (!(await within(drained, 100))) void server.stop(true).catch(() => {});
  }

  private async handle(req: Request): Promise<Response> {
    if (this.stopping) {
      // A request on a connection kept alive from before the stop.
      const body = JSON.stringify({ error: "the status API is shutting down" });
      return new Response(body, { status: 503, headers: { ...JSON_HEADERS, Connection: "close" } });
    }
    const headers: Record<string, string> = {};
    req.headers.forEach((v, k) => (headers[k.toLowerCase()] = v));
    const { path, query } = splitTarget(req.url, headers.host ?? "");
    let res: CoreHTTPResponse;
    try {
      res = this.deps.http({ method: req.method, port: this.server?.port ?? 0, path, query, headers, subscribers: this.streams.size });
    } catch (err) {
      this.deps.log("error", `asyncagents: the core could not answer ${req.method} ${path}: ${(err as Error).message}`);
      return new Response(JSON.stringify({ error: "the core could not answer" }), { status: 500, headers: JSON_HEADERS });
    }
    if (res.stream) {
      let ctl: ReadableStreamDefaultController<Uint8Array>;
      const stream = new ReadableStream<Uint8Array>(
        {
          start: (c) => {
            ctl = c;
            c.enqueue(encoder.encode(res.body ?? ""));
            this.streams.add(c);
          },
          cancel: () => {
            this.streams.delete(ctl);
          },
        },
        { highWaterMark: 64 },
      );
      return new Response(stream, { status: res.status, headers: res.headers });
    }
    if (res.asset) {
      const bytes = this.deps.asset?.(res.asset);
      if (!bytes) {
        const body = JSON.stringify({ error: `this server has no ${res.asset} page (it was not built with the plugin)` });
        return new Response(body, { status: 404, headers: JSON_HEADERS });
      }
      return new Response(bytes, { status: res.status, headers: res.headers });
    }
    if (res.logs) {
      let end!: () => void;
      const ended = new Promise<typeof STOPPED>((resolve) => (end = () => resolve(STOPPED)));
      this.waiting.add(end);
      try {
        const messages = await Promise.race([this.deps.logs(res.logs), ended]);
        if (messages === STOPPED) {
          const body = JSON.stringify({ error: "the status API stopped before OpenCode gave the task's messages" });
          return new Response(body, { status: 503, headers: { ...res.headers, Connection: "close" } });
        }
        return new Response(JSON.stringify(messages ?? []), { status: 200, headers: res.headers });
      } catch (err) {
        const body = JSON.stringify({ error: `could not read the task's messages: ${(err as Error).message}` });
        return new Response(body, { status: 502, headers: res.headers });
      } finally {
        this.waiting.delete(end);
      }
    }
    return new Response(res.status === 204 ? null : (res.body ?? ""), { status: res.status, headers: res.headers });
  }
}

/**
 * The request's path and query, as sent. Bun builds req.url from the Host header and the request
 * target ("http://<Host><target>", or just the target when Host is empty), so it is not parsed as
 * a URL: a Host such as "::1" would make that throw, and the core must judge every Host itself.
 */
export function splitTarget(url: string, host: string): { path: string; query: string } {
  let target = url;
  if (!url.startsWith("/")) {
    const prefix = `http://${host}`;
    if (host !== "" && url.startsWith(prefix) && url.charAt(prefix.length) === "/") {
      target = url.slice(prefix.length);
    } else {
      // Bun normalised the Host (0177.0.0.1 becomes 127.0.0.1): the target starts at the first
      // "/" after the scheme.
      const scheme = url.indexOf("://");
      const slash = url.indexOf("/", scheme < 0 ? 0 : scheme + 3);
      target = slash < 0 ? "/" : url.slice(slash);
    }
  }
  const q = target.indexOf("?");
  return q < 0 ? { path: target, query: "" } : { path: target.slice(0, q), query: target.slice(q + 1) };
}

/** Removes a file if there is one; a file already gone is fine. Synchronous, for 'exit'. */
export function removeFile(path: string | undefined): void {
  if (!path) return;
  try {
    unlinkSync(path);
  } catch {}
}

