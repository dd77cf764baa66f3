// The status API server's graceful stop, with a real Bun.serve on 127.0.0.1: server.json goes at
// once, event streams end, new connections are refused, an answer in flight (a task's logs,
// awaiting OpenCode) still completes, within a deadline; and on SIGTERM the process ends by the
// signal once that is done. The core is replaced by a fixed http dep: what is tested here is the
// server's part.
import { afterEach, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ApiServer, splitTarget, type ApiDeps } from "./server";
import { API_ERR_BUSY, API_IDLE_TIMEOUT_MS, type CoreHTTPRequest, type CoreHTTPResponse } from "../bridge/types";

/** Every wait in this file is bounded by this. */
const BOUND_MS = 5000;
const LOGS_DELAY_MS = 300;

function bounded<T>(p: Promise<T>, what: string, ms = BOUND_MS): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([p, bound]).finally(() => clearTimeout(timer));
}

async function until(what: string, cond: () => boolean): Promise<void> {
  const deadline = Date.now() + BOUND_MS;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(5);
  }
}

/** A stand-in for the core's http op: logs for /v1/tasks/:id/logs, a stream for /v1/events. */
function fakeHTTP(req: CoreHTTPRequest): CoreHTTPResponse {
  const json = { "Content-Type": "application/json; charset=utf-8" };
  const logs = /^\/v1\/tasks\/([^/]+)\/logs$/.exec(req.path);
  if (logs) return { status: 200, headers: json, body: "", logs: logs[1] };
  const conv = /^\/v1\/tasks\/([^/]+)\/messages$/.exec(req.path);
  if (conv) return { status: 200, headers: json, body: '{"messages":[],"fromHistory":true}', messages: conv[1] };
  if (req.path === "/v1/events") {
    return { status: 200, headers: { "Content-Type": "text/event-stream" }, body: "event: snapshot\ndata: {}\n\n", stream: true };
  }
  return { status: 200, headers: json, body: `{"path":${JSON.stringify(req.path)}}` };
}

const messages = [{ info: { id: "msg_1", role: "assistant" }, parts: [{ type: "text", text: "done" }] }];

/** logs answers after LOGS_DELAY_MS (noting the session in answered), or never for "ses_hang". */
function slowDeps(logged: string[] = [], asked: string[] = [], answered: string[] = []): ApiDeps {
  return {
    http: fakeHTTP,
    logs: (id) => {
      asked.push(id);
      if (id === "ses_hang") return new Promise(() => {});
      return Bun.sleep(LOGS_DELAY_MS).then(() => (answered.push(id), messages));
    },
    conversation: (raw) => ({ status: 200, headers: { "Content-Type": "application/json; charset=utf-8" }, body: `{"converted":${raw}}` }),
    log: (level, message) => logged.push(`${level}: ${message}`),
  };
}

/** Resolves with the connect error's code, or "connected". */
function tryConnect(port: number): Promise<string> {
  return bounded(
    new Promise<string>((resolve) => {
      const s = connect(port, "127.0.0.1");
      s.on("connect", () => {
        s.destroy();
        resolve("connected");
      });
      s.on("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    }),
    "a connection attempt",
  );
}

/** Reads one HTTP/1.1 answer with a Content-Length from a socket kept alive. */
function readAnswer(sock: Socket): Promise<{ status: number; head: string; body: string }> {
  return bounded(
    new Promise((resolve, reject) => {
      let buf = Buffer.alloc(0);
      const onData = (d: Buffer) => {
        buf = Buffer.concat([buf, d]);
        const split = buf.indexOf("\r\n\r\n");
        if (split < 0) return;
        const head = buf.subarray(0, split).toString();
        const length = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < split + 4 + length) return;
        sock.off("data", onData);
        resolve({ status: Number(head.split(" ")[1]), head, body: buf.subarray(split + 4, split + 4 + length).toString() });
      };
      sock.on("data", onData);
      sock.once("error", reject);
    }),
    "an answer on a kept-alive connection",
  );
}

const dirs: string[] = [];
const servers: ApiServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => bounded(s.stop(100), "cleanup stop")));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempServerJSON(): string {
  const dir = mkdtempSync(join(tmpdir(), "asyncagents-server-"));
  dirs.push(dir);
  return join(dir, "server.json");
}

function startServer(deps: ApiDeps, idleSeconds?: number, maxRequests?: number): { api: ApiServer; port: number; base: string; serverJSON: string } {
  const api = new ApiServer(deps, idleSeconds, maxRequests);
  servers.push(api);
  const serverJSON = tempServerJSON();
  const port = api.start([], serverJSON, (port, url) => JSON.stringify({ port, url, token: "t0ken" }));
  expect(port).toBeGreaterThan(0);
  expect(existsSync(serverJSON)).toBe(true);
  return { api, port: port!, base: `http://127.0.0.1:${port}`, serverJSON };
}

test("a graceful stop lets the answer in flight finish, and removes server.json and refuses connections at once", async () => {
  const asked: string[] = [];
  const answered: string[] = [];
  const { api, port, base, serverJSON } = startServer(slowDeps([], asked, answered));

  // An event stream, open across the stop.
  const events = await bounded(fetch(`${base}/v1/events`), "the event stream");
  const reader = events.body!.getReader();
  const snapshot = new TextDecoder().decode((await bounded(reader.read(), "the snapshot")).value);
  expect(snapshot).toStartWith("event: snapshot\n");
  expect(api.subscribers).toBe(1);

  // A logs answer in flight: the server is awaiting OpenCode when the stop comes.
  const inFlight = fetch(`${base}/v1/tasks/ses_x/logs`).then(async (r) => ({ status: r.status, body: await r.text(), at: performance.now() }));
  await until("the logs request to reach the server", () => asked.length === 1);

  const t0 = performance.now();
  // What OpenCode had given when the stop resolved: the stop waits for the answer in flight.
  const stopped = api.stop(2000).then(() => ({ at: performance.now(), answered: [...answered] }));
  expect(existsSync(serverJSON)).toBe(false); // at once, before any await
  expect(await tryConnect(port)).toBe("ECONNREFUSED");
  const refusedAt = performance.now();
  const end = await bounded(reader.read(), "the event stream's end");
  expect(end.done).toBe(true);
  expect(api.subscribers).toBe(0);

  const answer = await bounded(inFlight, "the answer in flight");
  expect(answer.status).toBe(200);
  expect(JSON.parse(answer.body)).toEqual(messages);
  const stop = await bounded(stopped, "the stop");
  // The stop waited for the answer (it came whole, not cut by the grace period's 503), and ended
  // after it.
  expect(stop.answered).toEqual(["ses_x"]);
  console.log(
    `graceful stop: refused new connections after ${(refusedAt - t0).toFixed(1)} ms, ` +
      `the answer in flight finished ${(answer.at - t0).toFixed(0)} ms and the stop ${(stop.at - t0).toFixed(0)} ms after the stop began`,
  );
});

test("300 idle sockets do not hold up /v1/health", async () => {
  const { port, base } = startServer(slowDeps());
  const idle = await bounded(
    Promise.all(
      Array.from(
        { length: 300 },
        () =>
          new Promise<Socket>((resolve, reject) => {
            const s = connect(port, "127.0.0.1");
            s.on("connect", () => resolve(s));
            s.on("error", reject);
          }),
      ),
    ),
    "300 idle sockets",
  );
  try {
    // Bounded well inside the idle timeout: an answer that waited for idle sockets would fail.
    const res = await bounded(fetch(`${base}/v1/health`), "/v1/health with 300 idle sockets", API_IDLE_TIMEOUT_MS / 3);
    expect(res.status).toBe(200);
    await res.text();
  } finally {
    for (const s of idle) s.destroy();
  }
});

test("a connection that sends nothing is closed after the idle timeout; an event stream is not", async () => {
  const { port, base } = startServer(slowDeps(), 1);
  const events = await bounded(fetch(`${base}/v1/events`), "the event stream");
  const reader = events.body!.getReader();
  expect(new TextDecoder().decode((await bounded(reader.read(), "the snapshot")).value)).toStartWith("event: snapshot\n");
  // A kept-alive connection, silent after its answer, opened after the stream: once the server
  // closes it for idling (Bun checks every few seconds), the stream, silent as long, must still
  // be open.
  const kept = connect(port, "127.0.0.1");
  const closed = new Promise<void>((resolve) => kept.on("close", () => resolve()));
  kept.on("error", () => {});
  kept.write("GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  expect((await readAnswer(kept)).status).toBe(200);
  await bounded(closed, "the kept-alive connection to be closed for idling", 3 * BOUND_MS);
  let streamEnded = false;
  void reader.read().then((r) => (streamEnded = r.done));
  await Bun.sleep(0);
  expect(streamEnded).toBe(false);
  await reader.cancel();
});

test("past the cap on open requests, a request is answered 503 at once; below it again, 200", async () => {
  const { base } = startServer(slowDeps(), undefined, 2);
  const closers = [new AbortController(), new AbortController()];
  const streams = await Promise.all(closers.map((c) => bounded(fetch(`${base}/v1/events`, { signal: c.signal }), "an event stream")));
  expect(streams.map((r) => r.status)).toEqual([200, 200]);
  const busy = await bounded(fetch(`${base}/v1/health`), "a request past the cap");
  expect(busy.status).toBe(503);
  expect(await busy.json()).toEqual({ error: API_ERR_BUSY });
  // One stream ends: once the server has seen it go, requests are answered again.
  closers[0].abort();
  const deadline = Date.now() + BOUND_MS;
  let status = 503;
  while (status === 503 && Date.now() < deadline) {
    const res = await bounded(fetch(`${base}/v1/health`), "a request below the cap");
    status = res.status;
    await res.text();
    if (status === 503) await Bun.sleep(10);
  }
  expect(status).toBe(200);
  closers[1].abort();
});

test("a task's conversation is read from OpenCode and put in shape by the core, not the history's", async () => {
  const asked: string[] = [];
  const { base } = startServer(slowDeps([], asked));
  const res = await bounded(fetch(`${base}/v1/tasks/ses_conv/messages`), "the conversation");
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ converted: messages });
  expect(asked).toEqual(["ses_conv"]);
});

test("with nothing in flight the stop is immediate", async () => {
  const { api, base } = startServer(slowDeps());
  const res = await bounded(fetch(`${base}/v1/health`), "a request");
  expect(res.status).toBe(200);
  await res.text(); // leaves an idle kept-alive connection
  // With a grace period far longer than the bound, a stop that waited for it would time out here.
  const t0 = performance.now();
  await bounded(api.stop(60_000), "the stop, with nothing in flight");
  console.log(`idle stop took ${(performance.now() - t0).toFixed(1)} ms`);
});

test("an answer that outlives the grace period ends with 503, and the stop ends on time", async () => {
  const logged: string[] = [];
  const asked: string[] = [];
  const { api, base } = startServer(slowDeps(logged, asked));
  const hung = fetch(`${base}/v1/tasks/ses_hang/logs`).then(
    async (r) => `answered ${r.status}: ${await r.text()}`,
    (err: Error) => `cut: ${err.name}`,
  );
  await until("the logs request to reach the server", () => asked.length === 1);
  const t0 = performance.now();
  await bounded(api.stop(300), "the stop");
  const took = performance.now() - t0;
  // The outcome shows the grace period ran out: the hung answer was cut with a 503, and said so.
  expect(await bounded(hung, "the hung request")).toStartWith("answered 503: ");
  expect(logged.some((l) => l.startsWith("warn: ") && l.includes("gave up on 1 answer"))).toBe(true);
  console.log(`stop with an answer that never comes (grace 300 ms) took ${took.toFixed(0)} ms`);
});

test("during the grace period a request on a kept-alive connection gets 503", async () => {
  const asked: string[] = [];
  const { api, port, base } = startServer(slowDeps([], asked));
  const sock = connect(port, "127.0.0.1");
  await bounded(new Promise((r) => sock.once("connect", r)), "connect");
  try {
    const ask = (path: string) => sock.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    ask("/v1/health");
    expect((await readAnswer(sock)).status).toBe(200);
    const inFlight = fetch(`${base}/v1/tasks/ses_x/logs`).then((r) => r.status);
    await until("the logs request to reach the server", () => asked.length === 1);
    const stopped = api.stop(2000);
    ask("/v1/health");
    const late = await readAnswer(sock);
    expect(late.status).toBe(503);
    expect(late.head.toLowerCase()).toContain("connection: close");
    expect(JSON.parse(late.body).error).toContain("shutting down");
    expect(await bounded(inFlight, "the answer in flight")).toBe(200);
    await bounded(stopped, "the stop");
  } finally {
    sock.destroy();
  }
});

test("the request target is taken as sent, whatever the Host", () => {
  expect(splitTarget("http://127.0.0.1:5165/v1/tasks?status=running", "127.0.0.1:5165")).toEqual({ path: "/v1/tasks", query: "status=running" });
  expect(splitTarget("http://::1/v1/health", "::1")).toEqual({ path: "/v1/health", query: "" });
  expect(splitTarget("/v1/health", "")).toEqual({ path: "/v1/health", query: "" });
  expect(splitTarget("http://127.0.0.1/v1/tasks/ses%zz?search=%zz", "0177.0.0.1")).toEqual({ path: "/v1/tasks/ses%zz", query: "search=%zz" });
  expect(splitTarget("http://a/b/v1/x?q", "a/b")).toEqual({ path: "/v1/x", query: "q" });
});

// The process side, in a child process: stopWithProcess on SIGTERM, then the signal again.
const childScript = (serverTs: string) => `
import { ApiServer } from ${JSON.stringify(serverTs)};
import { stopWithProcess } from ${JSON.stringify(serverTs.replace(/server\.ts$/, "process_end.ts"))};
const grace = Number(process.env.GRACE_MS);
const api = new ApiServer({
  http: (req) => {
    const m = /^\\/v1\\/tasks\\/([^/]+)\\/logs$/.exec(req.path);
    return m ? { status: 200, headers: { "Content-Type": "application/json" }, body: "", logs: m[1] } : { status: 200, headers: {}, body: "{}" };
  },
  logs: (id) => {
    console.log("asked " + id);
    return id === "ses_hang" ? new Promise(() => {}) : Bun.sleep(${LOGS_DELAY_MS}).then(() => [{ id: "m" }]);
  },
  log: (level, message) => console.error(level + ": " + message),
});
const port = api.start([], process.env.SERVER_JSON, (port, url) => JSON.stringify({ port, url, token: "t0ken" }));
stopWithProcess(api, grace);
console.log("port " + port);
if (process.env.EXIT_AT_ONCE) process.exit(0);
`;

async function runChild(env: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), "asyncagents-signal-"));
  dirs.push(dir);
  const script = join(dir, "child.ts");
  writeFileSync(script, childScript(join(import.meta.dir, "server.ts")));
  const serverJSON = join(dir, "server.json");
  const child = Bun.spawn([process.execPath, script], {
    env: { ...process.env, SERVER_JSON: serverJSON, GRACE_MS: "2000", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const lines: string[] = [];
  void (async () => {
    const decoder = new TextDecoder();
    let buf = "";
    for await (const chunk of child.stdout) {
      buf += decoder.decode(chunk, { stream: true });
      const parts = buf.split("\n");
      buf = parts.pop()!;
      lines.push(...parts);
    }
  })();
  const exited = child.exited.then(() => performance.now());
  return { child, lines, serverJSON, exited };
}

test("on SIGTERM the process finishes the answer in flight, then ends by the signal", async () => {
  // A grace period far longer than the bound: a process that waited it out would time out here.
  const { child, lines, serverJSON, exited } = await runChild({ GRACE_MS: "60000" });
  try {
    await until("the child's port", () => lines.some((l) => l.startsWith("port ")));
    const port = Number(lines.find((l) => l.startsWith("port "))!.slice(5));
    expect(existsSync(serverJSON)).toBe(true);
    const inFlight = fetch(`http://127.0.0.1:${port}/v1/tasks/ses_x/logs`).then(async (r) => ({ status: r.status, body: await r.text() }));
    await until("the logs request to reach the child", () => lines.includes("asked ses_x"));
    const t0 = performance.now();
    child.kill("SIGTERM");
    await until("server.json to go", () => !existsSync(serverJSON));
    const goneAt = performance.now();
    const answer = await bounded(inFlight, "the answer in flight");
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual([{ id: "m" }]);
    const exitAt = await bounded(exited, "the child's exit");
    expect(child.signalCode).toBe("SIGTERM");
    console.log(`SIGTERM: server.json gone after ${(goneAt - t0).toFixed(0)} ms, process ended by the signal ${(exitAt - t0).toFixed(0)} ms after it`);
  } finally {
    child.kill("SIGKILL");
  }
});

test("on SIGTERM an answer that never comes holds the process for the grace period only", async () => {
  const { child, lines, exited } = await runChild({ GRACE_MS: "500" });
  try {
    await until("the child's port", () => lines.some((l) => l.startsWith("port ")));
    const port = Number(lines.find((l) => l.startsWith("port "))!.slice(5));
    const hung = fetch(`http://127.0.0.1:${port}/v1/tasks/ses_hang/logs`).then(
      (r) => `answered ${r.status}`,
      (err: Error) => `cut: ${err.name}`,
    );
    await until("the logs request to reach the child", () => lines.includes("asked ses_hang"));
    const t0 = performance.now();
    child.kill("SIGTERM");
    // The process ends within the bound, and not before the grace period ran out: the hung
    // answer got the 503 the server writes only then (an exit at once would have cut it).
    const exitAt = await bounded(exited, "the child's exit");
    expect(child.signalCode).toBe("SIGTERM");
    expect(await bounded(hung, "the hung request")).toBe("answered 503");
    console.log(`SIGTERM with a hung answer: the process ended ${(exitAt - t0).toFixed(0)} ms after the signal (grace 500 ms)`);
  } finally {
    child.kill("SIGKILL");
  }
});

test("on exit server.json is removed", async () => {
  const { child, lines, serverJSON, exited } = await runChild({ EXIT_AT_ONCE: "1" });
  try {
    await bounded(exited, "the child's exit");
    expect(child.exitCode).toBe(0);
    await until("the child's port", () => lines.some((l) => l.startsWith("port ")));
    expect(existsSync(serverJSON)).toBe(false);
  } finally {
    child.kill("SIGKILL");
  }
});

test("the core hears how many event streams are open each time one closes", async () => {
  const told: number[] = [];
  const { api, port } = startServer({ ...slowDeps(), streams: (open) => told.push(open) });
  const open = async () => {
    const s = connect(port, "127.0.0.1");
    s.on("error", () => {});
    const snapshot = new Promise((resolve) => s.once("data", resolve));
    s.write("GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    await bounded(snapshot, "the stream's snapshot");
    return s;
  };
  const a = await open();
  const b = await open();
  expect(api.subscribers).toBe(2);
  expect(told).toEqual([]); // an open stream is the core's to count (it answered the request)
  // A client gone is seen at once, or when a frame is written to it (the heartbeats).
  a.destroy();
  await until("the first close told", () => (api.broadcast("event: heartbeat\ndata: {}\n\n"), told.length > 0));
  expect(told).toEqual([1]);
  b.destroy();
  await until("the second close told", () => (api.broadcast("event: heartbeat\ndata: {}\n\n"), told.length > 1));
  expect(told).toEqual([1, 0]);
});
