// A worker's event stream read from a plain socket, where that is as safe as `fetch`: an http://
// worker (loopback, or one the user marked insecure) reached without a proxy. The request is
// HTTP/1.0, so OpenCode sends the stream's bytes as they are, without chunked framing, and the
// body ends when the connection does. Measured in BenchmarkWorkers, reading a busy worker's
// stream this way cost the plugin's Worker a fifth less than `fetch` did, at the same notice
// latency (BENCHMARKS.md). An https:// worker keeps `fetch`, whose certificate checks are the
// platform's; so does a stream the server frames anyway (RawStreamUnsupported).

import { authorization, reason, refusal, scrub, workerURL, WorkerRequestError, type Remote } from "./workers_client";

/** The server answered in a form this reader does not take; `fetch` reads the stream instead. */
export class RawStreamUnsupported extends Error {}

const PROXY_VARS = ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"];
const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]", "::1"]);
/** The most of an answer's headers read before the stream is given up (OpenCode's are 300 bytes). */
const MAX_HEAD_BYTES = 64 * 1024;
/** The most of a refusal's body kept for its reason (OpenCode's error JSON is far shorter). */
const MAX_REFUSAL_BYTES = 16 * 1024;

/** Whether remote's stream may be read from a plain socket (see the file's comment). */
export function rawStreamable(remote: Remote, env: Record<string, string | undefined> = process.env): boolean {
  let url: URL;
  try {
    url = new URL(remote.url);
  } catch {
    return false;
  }
  if (url.protocol !== "http:") return false;
  return LOOPBACK.has(url.hostname) || !PROXY_VARS.some((name) => env[name]);
}

/**
 * GETs path from remote over HTTP/1.0 and hands each piece of the body to onBytes, until the
 * server closes the connection (resolves) or signal aborts (resolves). A refusal throws a
 * WorkerRequestError with the plain reason, as `request` does; a connection that fails throws
 * its plain reason too.
 */
export function streamRaw(remote: Remote, path: string, signal: AbortSignal, onBytes: (bytes: Uint8Array) => void): Promise<void> {
  const url = workerURL(remote, path);
  const auth = authorization(remote);
  return new Promise<void>((resolve, reject) => {
    let socket: { end(): void } | undefined;
    let head: Buffer | undefined = Buffer.alloc(0);
    let found: { status: number; location: string; body: Buffer } | undefined;
    let settled = false;
    const settle = (err?: unknown) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener("abort", onAbort);
      socket?.end();
      if (err === undefined) resolve();
      else reject(err instanceof WorkerRequestError || err instanceof RawStreamUnsupported ? err : new WorkerRequestError(scrub(reason(err), remote)));
    };
    const onAbort = () => settle();
    if (signal.aborted) return resolve();
    signal.addEventListener("abort", onAbort, { once: true });
    const finish = () => {
      if (!found) return settle(head ? new WorkerRequestError("the worker closed the stream before answering") : undefined);
      settle(new WorkerRequestError(scrub(refusal(found.status, found.location, found.body.toString("utf8")), remote)));
    };
    Bun.connect({
      hostname: url.hostname.replace(/^\[|\]$/g, ""),
      port: Number(url.port || 80),
      socket: {
        open(s) {
          socket = s;
          if (settled) {
            s.end();
            return;
          }
          s.write(`GET ${url.pathname}${url.search} HTTP/1.0\r\nHost: ${url.host}\r\nAuthorization: ${auth}\r\nAccept: text/event-stream\r\n\r\n`);
        },
        data(_s, bytes) {
          if (settled) return;
          if (found) {
            if (found.body.length < MAX_REFUSAL_BYTES) found.body = Buffer.concat([found.body, bytes]);
            return;
          }
          if (!head) return onBytes(bytes);
          head = Buffer.concat([head, bytes]);
          const end = head.indexOf("\r\n\r\n");
          if (end < 0) {
            if (head.length > MAX_HEAD_BYTES) settle(new WorkerRequestError("the worker's answer has no end to its headers"));
            return;
          }
          const lines = head.toString("latin1", 0, end).split("\r\n");
          const rest = head.subarray(end + 4);
          head = undefined;
          const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0])?.[1] ?? 0);
          const header = (name: string) => lines.find((l) => l.toLowerCase().startsWith(`${name}:`))?.slice(name.length + 1).trim() ?? "";
          if (status === 200 && header("transfer-encoding") !== "") return settle(new RawStreamUnsupported("the stream came framed"));
          if (status !== 200) {
            found = { status, location: header("location"), body: Buffer.from(rest) };
            return;
          }
          if (rest.length > 0) onBytes(rest);
        },
        end: finish,
        close: finish,
        error: (_s, err) => settle(err),
        connectError: (_s, err) => settle(err),
      },
    }).catch((err) => settle(err));
  });
}
