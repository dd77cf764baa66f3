// A stand-in for a worker's `opencode serve`, for the plugin's bun tests: basic auth on every
// route (401 with OpenCode's empty body otherwise), each request recorded, a handler per route
// the test sets, and /global/event streams the test writes frames into. Listens on 127.0.0.1.
// Not part of the plugin.

import { afterEach, beforeEach } from "bun:test";
import type { Effect } from "../bridge/core";
import { performOnWorker } from "./workers_effects";
import { WorkerFollowers } from "./workers_follow";

export interface Seen {
  method: string;
  path: string;
  directory: string | null;
  auth: string | null;
  body: any;
  at: number;
}

export type Handler = (req: Request, body: any) => Response | Promise<Response>;

export interface FakeWorker {
  url: string;
  seen: Seen[];
  /** Sets the answer of "METHOD /path" (the path without its query). */
  on(route: string, h: Handler): void;
  /** The /global/event streams open now, oldest first. */
  streams: EventStream[];
  /** Resolves when the nth stream (1-based) has opened; bounded by the caller's test timeout. */
  nthStream(n: number): Promise<EventStream>;
  /** The password the fake accepts: change it and every request gets 401. */
  password: string;
  stop(): void;
}

export interface EventStream {
  /** Sends one frame: data is JSON-encoded. */
  send(data: unknown): void;
  /** Ends the stream from the server's side. */
  end(): void;
  /** Resolves when the client went away (aborted its request). */
  closed: Promise<void>;
}

export function fakeWorker(username = "opencode", password = "s3cret-pw"): FakeWorker {
  const routes = new Map<string, Handler>();
  const waiters: { n: number; resolve(s: EventStream): void }[] = [];
  let opened = 0;
  const all: EventStream[] = [];
  const fake: FakeWorker = {
    url: "",
    seen: [],
    streams: [],
    password,
    on: (route, h) => void routes.set(route, h),
    nthStream: (n) => (all[n - 1] ? Promise.resolve(all[n - 1]) : new Promise((resolve) => waiters.push({ n, resolve }))),
    stop: () => server.stop(true),
  };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    fetch: async (req) => {
      const url = new URL(req.url);
      const text = req.method === "GET" ? "" : await req.text();
      let body: any = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {}
      const auth = req.headers.get("authorization");
      fake.seen.push({ method: req.method, path: url.pathname, directory: url.searchParams.get("directory"), auth, body, at: performance.now() });
      if (auth !== `Basic ${Buffer.from(`${username}:${fake.password}`).toString("base64")}`) {
        return new Response(null, { status: 401, headers: { "www-authenticate": 'Basic realm="Secure Area"' } });
      }
      const h = routes.get(`${req.method} ${url.pathname}`);
      if (h) return h(req, body);
      if (req.method === "GET" && url.pathname === "/global/event") return openStream(req);
      return Response.json({ name: "NotFoundError", data: { message: `no route ${req.method} ${url.pathname}` } }, { status: 404 });
    },
  });
  fake.url = `http://127.0.0.1:${server.port}`;

  function openStream(req: Request): Response {
    const enc = new TextEncoder();
    let ctl!: ReadableStreamDefaultController<Uint8Array>;
    let closedResolve!: () => void;
    const closed = new Promise<void>((r) => (closedResolve = r));
    const body = new ReadableStream<Uint8Array>({
      start: (c) => void (ctl = c),
      cancel: () => closedResolve(),
    });
    req.signal.addEventListener("abort", () => closedResolve(), { once: true });
    const stream: EventStream = {
      send: (data) => {
        try {
          ctl.enqueue(enc.encode(`data: ${JSON.stringify(data)}\n\n`));
        } catch {}
      },
      end: () => {
        try {
          ctl.close();
        } catch {}
      },
      closed,
    };
    void closed.then(() => (fake.streams = fake.streams.filter((s) => s !== stream)));
    fake.streams.push(stream);
    all.push(stream);
    opened++;
    for (const w of waiters.filter((w) => w.n <= opened)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(all[w.n - 1]);
    }
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  }
  return fake;
}

/** A /global/event frame of payload type with properties, from directory's instance. */
export function frame(type: string, properties: unknown = {}, directory = "/repo") {
  return { directory, project: "p1", payload: { id: `evt_${type}`, type, properties } };
}

/** Waits until cond holds, polling every 5 ms, for at most ms (then throws naming what). */
export async function until(what: string, cond: () => boolean, ms = 5_000): Promise<void> {
  const end = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(5);
  }
}

/**
 * A fresh fake worker for each test of the calling file, its password in the environment variable
 * passwordEnv, and a followers set; all stopped after each test. on() carries out an effect on it
 * as worker "w1".
 */
export function workerPerTest(passwordEnv: string, password: string) {
  const t = {
    fake: undefined as unknown as FakeWorker,
    followers: undefined as unknown as WorkerFollowers,
    remote: () => ({ url: t.fake.url, username: "opencode", passwordEnv }),
    on: (e: Partial<Effect>) => performOnWorker({ id: 1, worker: "w1", remote: t.remote(), ...e } as Effect, t.followers),
  };
  beforeEach(() => {
    t.fake = fakeWorker("opencode", password);
    process.env[passwordEnv] = password;
    t.followers = new WorkerFollowers(() => {});
  });
  afterEach(() => {
    t.followers.stop();
    t.fake.stop();
    delete process.env[passwordEnv];
  });
  return t;
}
