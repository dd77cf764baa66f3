// Requests to the status API of the server that served this page, with the page's credential.
//
// The page is opened with a one-time code (/?code=…, from asyncagents dashboard), never the
// token. It trades the code for a credential and keeps that in sessionStorage, which only this
// origin (scheme, host and port) reads: a cookie of 127.0.0.1 would go to every server on it.
// Every request, the event stream included, sends it as Authorization: Bearer.

export class APIError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const CREDENTIAL_KEY = "asyncagents.credential";

function credential(): string | null {
  try {
    return sessionStorage.getItem(CREDENTIAL_KEY);
  } catch {
    return null; // storage refused (a sandboxed page): the API answers 401, and the page says how to open it
  }
}

/** The headers every request sends: the credential, when the page has one. */
export function authHeaders(accept: string): Record<string, string> {
  const h: Record<string, string> = { Accept: accept };
  const c = credential();
  if (c) h.Authorization = `Bearer ${c}`;
  return h;
}

async function request<T>(method: string, path: string, payload?: unknown): Promise<T> {
  const headers = authHeaders("application/json");
  if (payload !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(path, { method, credentials: "omit", cache: "no-store", headers, body: payload === undefined ? undefined : JSON.stringify(payload) });
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (!res.ok) {
    const msg = (body as { error?: string } | undefined)?.error ?? `${res.status} ${res.statusText}`;
    throw new APIError(res.status, msg);
  }
  return body as T;
}

export const get = <T>(path: string) => request<T>("GET", path);
export const post = <T>(path: string, body?: unknown) => request<T>("POST", path, body);

/**
 * Trades the link's one-time code, if the address has one, for the credential. The code leaves
 * the address first, whether the trade works or not: it is good once anyway.
 */
export async function tradeCode(): Promise<void> {
  const params = new URLSearchParams(location.search);
  const code = params.get("code");
  if (code === null) return;
  history.replaceState(null, "", "/" + location.hash);
  const got = await post<{ credential: string }>(`/v1/dashboard/session?code=${encodeURIComponent(code)}`);
  try {
    sessionStorage.setItem(CREDENTIAL_KEY, got.credential);
  } catch {
    throw new APIError(0, "this browser keeps no sessionStorage for this page, where the dashboard keeps its credential");
  }
}

/** A path segment, escaped. */
export const seg = (s: string) => encodeURIComponent(s);
