// The status API's HTTP server inside the plugin: Bun.serve on 127.0.0.1, every answer computed
// by the core (the http op), Server-Sent Events fed by the core's sse.broadcast effects. This file
// only binds, writes server.json and moves bytes.

import { chmodSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { readCapped } from "./body";
import {
  API_ERR_BUSY,
  API_ERR_CORE_FAILED,
  API_ERR_LOGS_FAILED,
  API_ERR_LOGS_STOPPED,
  API_ERR_SHUTTING_DOWN,
  API_IDLE_TIMEOUT_MS,
  API_MAX_CONNECTIONS,
  MAX_REQUEST_BODY_BYTES,
  STOP_GRACE_MS,
  STREAM_BUFFER_FRAMES,
  type CoreHTTPRequest,
  type CoreHTTPResponse,
} from "../bridge/types";

export interface ApiDeps {
  http(req: CoreHTTPRequest): CoreHTTPResponse;
  /** A child session's messages; where names its worker (worker, remote, directory) when it lives on one. */
  logs(sessionID: string, where: Pick<CoreHTTPResponse, "worker" | "remote" | "directory">): Promise<unknown>;
  /** The answer to /v1/tasks/:id/messages from OpenCode's messages, as JSON text (the messages op). */
  conversation(messages: string): CoreHTTPResponse;
  log(level: string, message: string): void;
  /** The bytes of an asset the core names, or undefined when this host does not have it. */
  asset?(name: string): Uint8Array<ArrayBuffer> | undefined;
  /**
   * How many event streams are open, told after one closed (the core counts one that opens
   * itself): with none open the core makes no task frames (core/api_streams.go).
   */
  streams?(open: number): void;
}

const encoder = new TextEncoder();

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
  private serverFile?: OwnFile;
  private stopping?: Promise<void>;
  /** Ends each answer still awaiting OpenCode when the grace period is over. */
  private readonly waiting = new Set<() => void>();

  /**
   * idleSeconds: how long a connection that sends nothing is kept; maxRequests: how many
   * requests (event streams included) may be open at once. Tests lower them.
   */
  constructor(
    private readonly deps: ApiDeps,
    private readonly idleSeconds = API_IDLE_TIMEOUT_MS / 1000,
    private readonly maxRequests = API_MAX_CONNECTIONS,
  ) {}

  /** How many event streams are open. */
  get subscribers(): number {
    return this.streams.size;
  }

  private telling = false;

  /**
   * Tells deps.streams the count once the current turn is done: a stream dropped while a frame is
   * broadcast closes in the middle of the core's effects, and the core is not stepped from there.
   */
  private streamClosed(): void {
    if (this.telling || !this.deps.streams) return;
    this.telling = true;
    queueMicrotask(() => {
      this.telling = false;
      this.deps.streams?.(this.streams.size);
    });
  }

  /**
   * Binds 127.0.0.1 on the first free port of `ports` (then any port), and writes this process's
   * server file at serverJSON, its content as content gives it for the port bound (the core's
   * format: see Runtime.serverFile).
   */
  start(ports: number[], serverJSON: string, content: (port: number, url: string) => string): number | undefined {
    if (this.stopping) return undefined; // stopped (a dispose) before the core was configured
    for (const port of [...ports, 0]) {
      try {
        this.server = Bun.serve({
          hostname: "127.0.0.1",
          port,
          // A connection that sends nothing is closed (core/limits.go); an event stream is
          // exempt (handle), and gets its heartbeat.
          idleTimeout: this.idleSeconds,
          fetch: (req, server) => this.handle(req, server),
        });
        break;
      } catch {
        // taken: try the next one
      }
    }
    if (!this.server) return undefined;
    const port = this.server.port!;
    const file = { path: serverJSON, content: content(port, `http://127.0.0.1:${port}`) };
    try {
      writeOwnFile(file);
      this.serverFile = file;
    } catch (err) {
      // A read-only or full data folder: the API serves on, where the log says; only its file,
      // by which clients find it, is missing.
      this.deps.log("error", `asyncagents: the status API serves on port ${port}, but its server file could not be written: ${(err as Error).message}`);
    }
    return port;
  }

  /** Sends a frame to every open event stream; a subscriber that cannot keep up is dropped. */
  broadcast(frame: string): void {
    const bytes = encoder.encode(frame);
    for (const c of this.streams) {
      if (c.desiredSize !== null && c.desiredSize <= 0) {
        this.streams.delete(c);
        this.streamClosed();
        try {
          c.close();
        } catch {}
        continue;
      }
      try {
        c.enqueue(bytes);
      } catch {
        this.streams.delete(c);
        this.streamClosed();
      }
    }
  }

  /** Removes the server file at once, if it is still ours. Synchronous, for an 'exit' handler. */
  removeServerJSON(): void {
    removeOwnFile(this.serverFile);
    this.serverFile = undefined;
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

  private async handle(req: Request, server: Bun.Server<undefined>): Promise<Response> {
    if (server.pendingRequests > this.maxRequests) {
      // Bun shows requests, not connections: past the cap, a request is turned away at once.
      return new Response(errorBody(API_ERR_BUSY), { status: 503, headers: { ...JSON_HEADERS, Connection: "close" } });
    }
    if (this.stopping) {
      // A request on a connection kept alive from before the stop.
      const body = errorBody(API_ERR_SHUTTING_DOWN);
      return new Response(body, { status: 503, headers: { ...JSON_HEADERS, Connection: "close" } });
    }
    const headers: Record<string, string> = {};
    req.headers.forEach((v, k) => (headers[k.toLowerCase()] = v));
    const { path, query } = splitTarget(req.url, headers.host ?? "");
    let res: CoreHTTPResponse;
    try {
      // A POST gets fresh randomness: the dashboard's one-time codes are made of it (the core has none).
      const entropy = req.method === "POST" ? randomHex(32) : undefined;
      // The body, read one byte past the core's limit at most: the core refuses a longer one.
      const body = req.method === "POST" ? await readCapped(req, MAX_REQUEST_BODY_BYTES) : undefined;
      res = this.deps.http({ method: req.method, port: this.server?.port ?? 0, path, query, headers, subscribers: this.streams.size, entropy, body });
    } catch (err) {
      this.deps.log("error", `asyncagents: the core could not answer ${req.method} ${path}: ${(err as Error).message}`);
      return new Response(errorBody(API_ERR_CORE_FAILED), { status: 500, headers: JSON_HEADERS });
    }
    if (res.stream) {
      server.timeout(req, 0); // a stream is never idle: no idle timeout for it
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
            this.streamClosed();
          },
        },
        { highWaterMark: STREAM_BUFFER_FRAMES },
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
    if (res.logs || res.messages) {
      // Only OpenCode has the child's messages: /logs gives them as they are, /messages in the
      // core's conversation shape.
      let end!: () => void;
      const ended = new Promise<typeof STOPPED>((resolve) => (end = () => resolve(STOPPED)));
      this.waiting.add(end);
      try {
        const messages = await Promise.race([this.deps.logs((res.logs || res.messages)!, { worker: res.worker, remote: res.remote, directory: res.directory }), ended]);
        if (messages === STOPPED) {
          const body = errorBody(API_ERR_LOGS_STOPPED);
          return new Response(body, { status: 503, headers: { ...res.headers, Connection: "close" } });
        }
        if (res.messages) {
          const c = this.deps.conversation(JSON.stringify(messages ?? []));
          return new Response(c.body ?? "", { status: c.status, headers: c.headers });
        }
        return new Response(JSON.stringify(messages ?? []), { status: 200, headers: res.headers });
      } catch (err) {
        const body = errorBody(`${API_ERR_LOGS_FAILED}: ${(err as Error).message}`);
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

/** The body of an error the host answers itself (the core's own errors have the same shape). */
function errorBody(text: string): string {
  return JSON.stringify({ error: text });
}

/** Removes a file if there is one; a file already gone is fine. Synchronous, for 'exit'. */
/** A server file as this process wrote it: only a file that still holds content is its own. */
export interface OwnFile {
  path: string;
  content: string;
}

/**
 * Writes a server file atomically: a temporary file (mode 0600: it holds the token) renamed over
 * the path, so a reader sees the old file or the new one, never half of one. A stale file of a
 * process that had this pid before is replaced.
 */
export function writeOwnFile(f: OwnFile): void {
  mkdirSync(dirname(f.path), { recursive: true, mode: 0o700 });
  const tmp = `${f.path}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, f.content, { mode: 0o600 });
    chmodSync(tmp, 0o600); // a leftover temporary file kept its own mode
    renameSync(tmp, f.path);
  } catch (err) {
    try {
      unlinkSync(tmp); // a full disk: what was written of it would keep the space
    } catch {}
    throw err;
  }
}

/** Removes a server file only while it holds what this process wrote: another's stays. */
export function removeOwnFile(f: OwnFile | undefined): void {
  if (!f) return;
  try {
    if (readFileSync(f.path, "utf8") === f.content) unlinkSync(f.path);
  } catch {}
}

/** n random bytes as hex, from the platform's cryptographic generator. */
function randomHex(n: number): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(n)), (b) => b.toString(16).padStart(2, "0")).join("");
}
