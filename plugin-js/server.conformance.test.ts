// core/conformance/http played against the plugin's real server (ApiServer, Bun.serve) over real
// HTTP on 127.0.0.1, with the core running as .wasm: the cases the core passes natively and the Go
// host's net/http server passes (host/apiserver_test.go). Event streams are real too: a subscriber
// limit is reached by opening that many streams, and a stream case reads the snapshot frame.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Core, compile, type CoreConfig } from "../bridge/core";
import { match } from "../bridge/match";
import { ApiServer } from "./server";
import type { CoreHTTPRequest, CoreHTTPResponse } from "../bridge/types";

const httpDir = join(import.meta.dir, "..", "core", "conformance", "http");
const dashboardPage = new Uint8Array(readFileSync(join(import.meta.dir, "..", "host", "dashboard", "dashboard.html")));
const wasmPath = process.env.ASYNCAGENTS_WASM ?? join(import.meta.dir, "..", "dist", "asyncagents.wasm");
const module = await compile(readFileSync(wasmPath));

/** Every wait in this file is bounded by this. */
const BOUND_MS = 5000;

/** Renders tasks as a history log, the way the core writes one: XXH64 of the record, then the record. */
function historyOf(tasks: unknown[]): string {
  return tasks
    .map((t) => {
      const line = `{"task":${JSON.stringify(t)}}`;
      return `${Bun.hash.xxHash64(line).toString(16).padStart(16, "0")} ${line}\n`;
    })
    .join("");
}

interface HTTPCase {
  note?: string;
  request: { method: string; port?: number; path: string; query?: string; headers?: Record<string, string>; subscribers?: number };
  expect: Record<string, unknown>;
  /** Fields of the answer's body that later cases use as {name} (httpapi.Saved). */
  save?: string[];
}

/** Puts saved values where a request writes {name}: its path, query and headers. */
function putSaved(r: HTTPCase["request"], saved: Map<string, string>): HTTPCase["request"] {
  const put = (v: string) => [...saved].reduce((acc, [k, val]) => acc.replaceAll(`{${k}}`, val), v);
  const headers = Object.fromEntries(Object.entries(r.headers ?? {}).map(([k, v]) => [k, put(v)]));
  return { ...r, path: put(r.path), query: r.query === undefined ? undefined : put(r.query), headers };
}
interface HTTPFile {
  tasks: unknown[];
  config: NonNullable<CoreConfig["api"]>;
  now: number;
  cases: HTTPCase[];
}

/** What came back over the wire. body is the whole body, or a stream's first frame. */
interface Answer {
  status: number;
  header(name: string): string | null;
  stream: boolean;
  body: string;
  close(): void;
}

function withTimeout<T>(p: Promise<T>, what: string, ms = BOUND_MS): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([p, bound]).finally(() => clearTimeout(timer));
}

const isEventStream = (contentType: string | null) => (contentType ?? "").split(";")[0].trim() === "text/event-stream";

/** Reads a stream's first frame (up to the first blank line). */
async function firstFrame(reader: ReadableStreamDefaultReader<Uint8Array>, what: string): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  while (!text.includes("\n\n")) {
    const { value, done } = await withTimeout(reader.read(), `the first frame of ${what}`);
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  return text.slice(0, text.indexOf("\n\n") + 2);
}

/** Sends one request with fetch; Host and the other headers go out as given. */
async function viaFetch(base: string, method: string, target: string, headers: Record<string, string>, reqBody?: string): Promise<Answer> {
  const abort = new AbortController();
  // A redirect (the dashboard's /?token=) is what is checked, not followed.
  const res = await withTimeout(fetch(base + target, { method, headers, body: reqBody, signal: abort.signal, redirect: "manual" }), `${method} ${target}`);
  const close = () => abort.abort();
  if (isEventStream(res.headers.get("content-type")) && res.body) {
    const body = await firstFrame(res.body.getReader(), `${method} ${target}`);
    return { status: res.status, header: (n) => res.headers.get(n), stream: true, body, close };
  }
  const body = await withTimeout(res.text(), `the body of ${method} ${target}`);
  return { status: res.status, header: (n) => res.headers.get(n), stream: false, body, close };
}

/**
 * Sends one request over a bare socket as HTTP/1.0 (which needs no Host header): for the cases
 * fetch cannot send, a request without any Host. Reads until the server closes.
 */
function viaSocket(port: number, method: string, target: string, headers: Record<string, string>): Promise<Answer> {
  const head = [`${method} ${target} HTTP/1.0`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), "", ""].join("\r\n");
  const answer = new Promise<Answer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    const sock = connect(port, "127.0.0.1", () => sock.write(head));
    sock.on("data", (d: Buffer) => chunks.push(d));
    sock.on("error", reject);
    sock.on("close", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      const split = raw.indexOf("\r\n\r\n");
      if (split < 0) return reject(new Error(`no HTTP answer to ${method} ${target}: ${JSON.stringify(raw)}`));
      const [statusLine, ...lines] = raw.slice(0, split).split("\r\n");
      const fields = new Headers();
      for (const l of lines) {
        const i = l.indexOf(":");
        if (i > 0) fields.append(l.slice(0, i).trim(), l.slice(i + 1).trim());
      }
      const stream = isEventStream(fields.get("content-type"));
      resolve({
        status: Number(statusLine.split(" ")[1]),
        header: (n) => fields.get(n),
        stream,
        body: raw.slice(split + 4),
        close: () => {},
      });
    });
  });
  return withTimeout(answer, `${method} ${target} over a socket`);
}

/** Event streams held open so the server counts them as subscribers. */
class Subscribers {
  private readonly open: (() => void)[] = [];

  constructor(
    private readonly base: string,
    private readonly headers: Record<string, string>,
    private readonly api: ApiServer,
  ) {}

  /** Opens or closes streams until exactly n are open, and the server counts n. */
  async settle(n: number): Promise<void> {
    while (this.open.length > n) this.open.pop()!();
    while (this.open.length < n) {
      const a = await viaFetch(this.base, "GET", "/v1/events", this.headers);
      if (a.status !== 200 || !a.stream) {
        a.close();
        throw new Error(`subscriber ${this.open.length + 1} of ${n} was refused: ${a.status} ${a.body}`);
      }
      this.open.push(a.close);
    }
    const deadline = Date.now() + BOUND_MS;
    while (this.api.subscribers !== n) {
      if (Date.now() > deadline) throw new Error(`the server counts ${this.api.subscribers} subscribers, want ${n}`);
      await Bun.sleep(5);
    }
  }
}

const files = readdirSync(httpDir).filter((f) => f.endsWith(".json")).sort();

describe("status API conformance over Bun.serve", () => {
  test("there are case files", () => expect(files.length).toBeGreaterThan(0));

  for (const file of files) {
    test(
      file,
      async () => {
        const f = JSON.parse(readFileSync(join(httpDir, file), "utf8")) as HTTPFile;
        const core = await Core.instantiate(module);
        core.init({ api: f.config, maxConcurrentStarts: 1000 });
        const restored = core.call({ op: "restore", now: f.now, history: historyOf(f.tasks) }).restore;
        expect(restored?.restored).toBe(f.tasks.length);
        expect(restored?.corrupt ?? 0).toBe(0);

        // The core answers at the file's now, not the wall clock.
        const seen: CoreHTTPRequest[] = [];
        const logsAsked: string[] = [];
        const messages = [{ info: { id: "msg_1", role: "assistant" }, parts: [{ type: "text", text: "the child's words" }] }];
        const api = new ApiServer({
          http: (req) => {
            seen.push(req);
            return (core.call({ op: "http", now: f.now, http: req }) as unknown as { http: CoreHTTPResponse }).http;
          },
          logs: async (sessionID) => {
            logsAsked.push(sessionID);
            return messages;
          },
          conversation: (raw) => (core.call({ op: "messages", history: raw }) as unknown as { http: CoreHTTPResponse }).http,
          log: () => {},
          asset: (name) => (name === "dashboard" ? dashboardPage : undefined),
        });
        const dir = mkdtempSync(join(tmpdir(), "asyncagents-conformance-"));
        const serverJSON = join(dir, "server.json");
        const port = api.start([], serverJSON, (port, url) => JSON.stringify({ port, url, token: f.config.token ?? "" }));
        expect(port).toBeGreaterThan(0);
        // {port} in a case is this server's own port, in its requests and its expectations.
        const cases = (JSON.parse(readFileSync(join(httpDir, file), "utf8").replaceAll("{port}", String(port))) as HTTPFile).cases;
        const base = `http://127.0.0.1:${port}`;
        const streamHeaders: Record<string, string> = { host: "127.0.0.1" };
        if (f.config.token) streamHeaders.authorization = `Bearer ${f.config.token}`;
        const subscribers = new Subscribers(base, streamHeaders, api);

        let played = 0;
        let overSocket = 0;
        let skipped = 0;
        try {
          const saved = new Map<string, string>();
          for (const [i, c] of cases.entries()) {
            const label = `${file} case ${i} (${c.note ?? ""})`;
            const r = putSaved(c.request, saved);
            const headers = r.headers ?? {};
            const target = r.path + (r.query ? `?${r.query}` : "");
            const noHost = !("host" in headers) || headers.host === "";
            if (noHost && c.expect.stream === true) {
              skipped++; // no such case today: a stream over a bare socket is not read here
              continue;
            }
            await subscribers.settle(r.subscribers ?? 0);
            const asked = logsAsked.length;
            const calls = seen.length;
            const got = noHost ? await viaSocket(port!, r.method, target, headers) : await viaFetch(base, r.method, target, headers, (r as any).body);
            try {
              if (noHost) overSocket++;
              else played++;
              const fail = (err: string | null) => {
                if (err) throw new Error(`${label}: ${err}\nstatus ${got.status}, body ${got.body}`);
              };
              // The server asked the core once, with the subscribers really open.
              expect(seen.length, label).toBe(calls + 1);
              expect(seen[seen.length - 1].subscribers, label).toBe(r.subscribers ?? 0);

              const want = c.expect;
              if (typeof want.status === "number") expect(got.status, `${label}: ${got.body}`).toBe(want.status);
              if (want.headers) {
                const observed: Record<string, string> = {};
                for (const k of Object.keys(want.headers as object)) {
                  const v = got.header(k);
                  if (v !== null) observed[k] = v;
                }
                fail(match(want.headers, observed, "headers"));
              }
              if (want.asset === "dashboard") expect(got.body, `${label}: the page`).toBe(new TextDecoder().decode(dashboardPage));
              // stream and logs say what the host must do with the answer: stream it, or fetch
              // that task's messages. Both are observed from outside.
              const newLogs = logsAsked.slice(asked);
              expect(newLogs.length, label).toBeLessThanOrEqual(1);
              const observed: Record<string, unknown> = {};
              if (got.stream) observed.stream = true;
              if (newLogs.length) observed[typeof want.messages === "string" ? "messages" : "logs"] = newLogs[0];
              for (const key of ["stream", "logs", "messages"] as const) {
                if (key in want) fail(match({ [key]: want[key] }, observed, "response"));
              }
              if (typeof want.logs === "string") {
                // The core's body is empty; the host answers with the messages.
                expect(JSON.parse(got.body), label).toEqual(messages);
              } else if (typeof want.messages === "string") {
                // The host answers with OpenCode's messages in the conversation's shape.
                expect(JSON.parse(got.body), label).toEqual({
                  messages: [{ id: "msg_1", role: "assistant", type: "reply", content: "the child's words", toolCalls: [], timestamp: 0 }],
                });
              } else if ("body" in want) {
                fail(match(want.body, got.body, got.stream ? "first frame" : "body"));
              }
              if ("bodyJSON" in want) {
                let body: unknown;
                try {
                  body = JSON.parse(got.body);
                } catch {
                  fail(`body is not JSON`);
                }
                fail(match(want.bodyJSON, body, "body"));
              }
              for (const name of c.save ?? []) {
                const v = (JSON.parse(got.body) as Record<string, unknown>)[name];
                if (typeof v !== "string" || v === "") fail(`save: the body has no string field ${name}`);
                saved.set(name, v as string);
              }
            } finally {
              got.close();
            }
          }
        } finally {
          await subscribers.settle(0).catch(() => {});
          await withTimeout(api.stop(1000), "the server's stop");
          expect(existsSync(serverJSON)).toBe(false);
          rmSync(dir, { recursive: true, force: true });
        }
        console.log(`${file}: ${played} cases over fetch, ${overSocket} over a bare socket, ${skipped} skipped`);
        expect(played, "cases played over fetch").toBeGreaterThan(0);
        expect(played + overSocket + skipped).toBe(f.cases.length);
      },
      60_000,
    );
  }
});
