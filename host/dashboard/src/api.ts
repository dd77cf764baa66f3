// Requests to the status API of the server that served this page. Same origin only: the cookie
// the server set when the page was opened with its token authenticates them.

export class APIError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function request<T>(method: string, path: string): Promise<T> {
  const res = await fetch(path, { method, credentials: "same-origin", cache: "no-store", headers: { Accept: "application/json" } });
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
export const post = <T>(path: string) => request<T>("POST", path);

/** A path segment, escaped. */
export const seg = (s: string) => encodeURIComponent(s);
