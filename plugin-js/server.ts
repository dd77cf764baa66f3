// The status API's HTTP server inside the plugin: Bun.serve on 127.0.0.1, every answer computed
// by the core (the http op), Server-Sent Events fed by the core's sse.broadcast effects. This file
// only binds, writes server.json and moves bytes.

import { mkdirSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

export interface CoreHTTPRequest {
  method: string;
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
}

export interface ApiDeps {
  http(req: CoreHTTPRequest): CoreHTTPResponse;
  logs(sessionID: string): Promise<unknown>;
  log(level: string, message: string): void;
}

const encoder = new TextEncoder();

export class ApiServer {
  private server?: ReturnType<typeof Bun.serve>;
  private readonly streams = new Set<ReadableStreamDefaultController<Uint8Array>>();
  private serverJSON?: string;

  constructor(private readonly deps: ApiDeps) {}

  /**
   * Binds 127.0.0.1 on the first free port of `ports` (then any port), and writes server.json
   * (mode 0600: it holds the token).
   */
  start(ports: number[], serverJSON: string, token: string, startedAt: number): number | undefined {
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

  /** Stops accepting connections, lets in-flight answers finish, removes server.json. */
  stop(): void {
    if (this.serverJSON) {
      try {
        unlinkSync(this.serverJSON);
      } catch {}
      this.serverJSON = undefined;
    }
    for (const c of this.streams) {
      try {
        c.close();
      } catch {}
    }
    this.streams.clear();
    this.server?.stop(false);
    this.server = undefined;
  }

  private async handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const headers: Record<string, string> = {};
    req.headers.forEach((v, k) => (headers[k.toLowerCase()] = v));
    const res = this.deps.http({
      method: req.method,
      path: url.pathname,
      query: url.search.replace(/^\?/, ""),
      headers,
      subscribers: this.streams.size,
    });
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
    if (res.logs) {
      try {
        const messages = await this.deps.logs(res.logs);
        return new Response(JSON.stringify(messages ?? []), { status: 200, headers: res.headers });
      } catch (err) {
        const body = JSON.stringify({ error: `could not read the task's messages: ${(err as Error).message}` });
        return new Response(body, { status: 502, headers: res.headers });
      }
    }
    return new Response(res.status === 204 ? null : (res.body ?? ""), { status: res.status, headers: res.headers });
  }
}
