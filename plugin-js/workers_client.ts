// Requests to a worker: another machine's plain `opencode serve` (docs/rationale/workers.md).
// Basic auth with the password read from the environment variable the config names: the password
// is read here, at each request, and goes nowhere but into the Authorization header (never into
// an error, a log line or an effect). Every failure becomes a plain reason: "wrong username or
// password (401)", "connection refused", "timed out after 5 s", or OpenCode's own words.

import { WORKER_AUTH_FAILED, WORKER_CLOSED, WORKER_HEALTH_MS, WORKER_REFUSED, type Remote } from "../bridge/types";

/** How to reach a worker, as the core sends it with each of the worker's effects. */
export type { Remote };

/** A request to a worker that failed; the message is the plain reason, without the worker's name. */
export class WorkerRequestError extends Error {}

export interface RequestOptions {
  method?: string;
  /** The directory instance the request acts on (OpenCode's ?directory=). */
  directory?: string;
  body?: unknown;
  /** The request's limit, headers and body included; none for an event stream. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** The Authorization header for remote; fails, naming the variable, when it is not set. */
export function authorization(remote: Remote): string {
  const password = process.env[remote.passwordEnv];
  if (!remote.passwordEnv || password === undefined || password === "") {
    throw new WorkerRequestError(`environment variable ${remote.passwordEnv || "(none named)"} is not set`);
  }
  return `Basic ${Buffer.from(`${remote.username || "opencode"}:${password}`).toString("base64")}`;
}

/**
 * worker.health: the worker's GET /global/health as {healthy, version, date}, date being the
 * answer's Date header in ms (0 without one: the core reads the worker's clock from it); throws
 * the plain reason.
 */
export async function health(remote: Remote): Promise<{ healthy: boolean; version: string; date: number }> {
  const res = await request(remote, "global/health", { timeoutMs: WORKER_HEALTH_MS });
  const text = await res.text();
  const h = (text ? JSON.parse(text) : null) as { healthy?: boolean; version?: string } | null;
  const date = Date.parse(res.headers.get("date") ?? "");
  return { healthy: h?.healthy === true, version: h?.version ?? "", date: Number.isFinite(date) ? date : 0 };
}

/** The URL of path on the worker, with ?directory= when set. */
export function workerURL(remote: Remote, path: string, directory?: string): URL {
  const base = remote.url.endsWith("/") ? remote.url : `${remote.url}/`;
  const url = new URL(path.replace(/^\//, ""), base);
  if (directory) url.searchParams.set("directory", directory);
  return url;
}

/**
 * Sends one request to the worker and returns its response when it is a success; otherwise
 * throws a WorkerRequestError with the plain reason.
 */
export async function request(remote: Remote, path: string, opts: RequestOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { authorization: authorization(remote) };
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  const signals = [opts.signal, opts.timeoutMs ? AbortSignal.timeout(opts.timeoutMs) : undefined].filter((s) => s !== undefined);
  let res: Response;
  try {
    res = await fetch(workerURL(remote, path, opts.directory), {
      method: opts.method ?? (opts.body === undefined ? "GET" : "POST"),
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: signals.length === 0 ? undefined : signals.length === 1 ? signals[0] : AbortSignal.any(signals),
      // A worker is an address of its own: never follow a redirect elsewhere with the password.
      redirect: "manual",
    });
  } catch (err) {
    throw new WorkerRequestError(scrub(reason(err, opts.timeoutMs), remote));
  }
  if (res.ok) return res;
  throw new WorkerRequestError(scrub(await failure(res), remote));
}

/** The plain reason a request did not reach its answer. */
export function reason(err: unknown, timeoutMs?: number): string {
  const e = err as { name?: string; code?: string; message?: string };
  if (e?.name === "TimeoutError") return `timed out after ${seconds(timeoutMs ?? 0)} s`;
  if (e?.name === "AbortError") return "stopped";
  if (e?.code === "ConnectionRefused" || e?.code === "ECONNREFUSED") return WORKER_REFUSED;
  if (e?.code === "ConnectionClosed" || e?.code === "ECONNRESET") return WORKER_CLOSED;
  return e?.message || String(err);
}

/** The plain reason of a response that is no success. */
async function failure(res: Response): Promise<string> {
  const text = res.status === 401 || (res.status >= 300 && res.status < 400) ? "" : await res.text().catch(() => "");
  return refusal(res.status, res.headers.get("location") ?? "", text, res.statusText);
}

/** The plain reason of a refusal with status, its Location header and its body's text. */
export function refusal(status: number, location: string, text: string, statusText = ""): string {
  if (status === 401) return WORKER_AUTH_FAILED;
  if (status >= 300 && status < 400) return `redirected to ${location || "elsewhere"} (${status}); give the worker's own URL`;
  let msg = text.trim().slice(0, 500) || statusText || "no reason given";
  try {
    const e = JSON.parse(text);
    msg = e?.data?.message ?? e?.message ?? e?.name ?? msg;
  } catch {}
  return `${msg} (${status})`;
}

/** A number of seconds as a person reads it: 5, 0.5. */
function seconds(ms: number): string {
  return String(Math.round(ms / 100) / 10);
}

/** text without the worker's password or credentials, should anything ever echo them back. */
export function scrub(text: string, remote: Remote, env: Record<string, string | undefined> = process.env): string {
  const password = env[remote.passwordEnv];
  if (!password) return text;
  const credentials = Buffer.from(`${remote.username || "opencode"}:${password}`).toString("base64");
  return text.split(credentials).join("***").split(password).join("***");
}
