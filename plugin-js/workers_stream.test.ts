// The plain-socket reader of a worker's event stream, against a server written byte by byte: the
// request it sends, the body it hands on, the reasons it gives for a refusal, and the fall back to
// fetch when a server frames the stream anyway.

import { afterEach, expect, test } from "bun:test";
import type { CoreEvent } from "../bridge/types";
import { frame, until } from "./fake_worker";
import { WorkerRequestError } from "./workers_client";
import { WorkerFollowers } from "./workers_follow";
import { RawStreamUnsupported, rawStreamable, streamRaw } from "./workers_stream";

const PW_ENV = "AA_TEST_RAW_PASSWORD";
process.env[PW_ENV] = "raw-pw";

/** A TCP server on 127.0.0.1 that answers each request's head with answer(head). */
function byteServer(answer: (head: string) => string | string[], keepOpen = false) {
  const heads: string[] = [];
  const server = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      data(s, bytes) {
        const head = Buffer.from(bytes).toString("latin1");
        heads.push(head);
        const out = answer(head);
        for (const piece of Array.isArray(out) ? out : [out]) s.write(piece);
        if (!keepOpen) s.end();
      },
    },
  });
  return { heads, url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}

let stops: (() => void)[] = [];
afterEach(() => {
  for (const stop of stops) stop();
  stops = [];
});
const serve = (answer: (head: string) => string | string[], keepOpen = false) => {
  const s = byteServer(answer, keepOpen);
  stops.push(s.stop);
  return { ...s, remote: { url: s.url, username: "opencode", passwordEnv: PW_ENV } };
};

test("rawStreamable: http:// on loopback, or elsewhere without a proxy; never https://", () => {
  const r = (url: string) => ({ url, username: "opencode", passwordEnv: PW_ENV });
  expect(rawStreamable(r("http://127.0.0.1:4096"), {})).toBe(true);
  expect(rawStreamable(r("http://localhost:4096"), { HTTP_PROXY: "http://proxy:3128" })).toBe(true);
  expect(rawStreamable(r("http://10.0.0.7:4096"), {})).toBe(true);
  expect(rawStreamable(r("http://10.0.0.7:4096"), { http_proxy: "http://proxy:3128" })).toBe(false);
  expect(rawStreamable(r("https://w1.example:4096"), {})).toBe(false);
  expect(rawStreamable(r("not a url"), {})).toBe(false);
});

test("asks over HTTP/1.0 with the worker's credentials, and hands on the body as it is until the close", async () => {
  const body = `data: ${JSON.stringify(frame("session.idle", { sessionID: "ses_r" }))}\n\n`;
  const s = serve(() => ["HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n", body.slice(0, 9), body.slice(9)]);
  const got: Buffer[] = [];
  await streamRaw(s.remote, "global/event", new AbortController().signal, (b) => void got.push(Buffer.from(b)));
  expect(Buffer.concat(got).toString()).toBe(body);
  const lines = s.heads[0].split("\r\n");
  expect(lines[0]).toBe("GET /global/event HTTP/1.0");
  expect(lines).toContain(`Authorization: Basic ${Buffer.from("opencode:raw-pw").toString("base64")}`);
});

test("a refusal gives the plain reason fetch would, without the password", async () => {
  const cases: [string, string][] = [
    ["HTTP/1.1 401 Unauthorized\r\n\r\n", "wrong username or password (401)"],
    ["HTTP/1.1 302 Found\r\nLocation: http://elsewhere/\r\n\r\n", "redirected to http://elsewhere/ (302); give the worker's own URL"],
    ['HTTP/1.1 500 Internal\r\n\r\n{"data":{"message":"no instance for raw-pw"}}', "no instance for *** (500)"],
    ["", "the worker closed the stream before answering"],
  ];
  for (const [answer, reason] of cases) {
    const s = serve(() => answer);
    const err = await streamRaw(s.remote, "global/event", new AbortController().signal, () => {}).catch((e) => e);
    expect(err).toBeInstanceOf(WorkerRequestError);
    expect(err.message).toBe(reason);
  }
});

test("a server that frames the stream anyway is read with fetch, and its events still come", async () => {
  const data = `data: ${JSON.stringify(frame("session.idle", { sessionID: "ses_c" }))}\n\n`;
  const connected = `data: ${JSON.stringify({ payload: { type: "server.connected", properties: {} } })}\n\n`;
  const chunk = (t: string) => `${Buffer.byteLength(t).toString(16)}\r\n${t}\r\n`;
  const framed = () => `HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n${chunk(connected)}${chunk(data)}0\r\n\r\n`;
  const err = await streamRaw(serve(framed).remote, "global/event", new AbortController().signal, () => {}).catch((e) => e);
  expect(err).toBeInstanceOf(RawStreamUnsupported);
  const s = serve(framed);
  const fed: CoreEvent[] = [];
  const followers = new WorkerFollowers((e) => void fed.push(e), { firstBackoffMs: 20, maxBackoffMs: 40, silenceMs: 2_000 });
  stops.push(() => followers.stop());
  followers.follow("w9", s.remote);
  await until("the idle event", () => fed.some((e) => e.type === "opencode"));
  expect((fed.find((e) => e.type === "opencode") as any).event.properties.sessionID).toBe("ses_c");
  // The stream ends after its frames, and the follower connects again: the first request was the
  // plain socket's, every one after it fetch's (HTTP/1.1), the reconnects' included.
  await until("two reconnects", () => s.heads.length >= 4);
  expect(s.heads[0].startsWith("GET /global/event HTTP/1.0")).toBe(true);
  expect(s.heads.slice(1).every((h) => h.startsWith("GET /global/event HTTP/1.1"))).toBe(true);
});

test("an abort ends the read at once", async () => {
  const s = serve(() => "HTTP/1.1 200 OK\r\n\r\n: open\n\n", true);
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 30);
  await streamRaw(s.remote, "global/event", ac.signal, () => {});
  expect(ac.signal.aborted).toBe(true);
});
