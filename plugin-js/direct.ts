// The shortest path to OpenCode for the effects on a launch's and a notice's way: from the thread
// the core runs in (the plugin's Worker) straight to OpenCode's HTTP server, not by way of
// OpenCode's own thread and the plugin's SDK client there: that thread is busy with OpenCode's own
// work right after the child's turn, and a notice would wait for it to pick the notice up.
//
// Only where that server is this process's own: OpenCode builds the plugin's client on the URL its
// server listens on (`opencode serve`, `opencode --port`), and otherwise on an in-process fetch
// with the placeholder "http://localhost:4096", where nothing of ours may listen (another OpenCode
// could). The two are told apart without a request: the client's base URL is input.serverUrl, and
// it is not the placeholder (OpenCode's own server binds 127.0.0.1 unless told otherwise; one told
// to listen on localhost:4096 itself just keeps the client path).
// ASYNCAGENTS_DIRECT=false keeps every effect on the client.

import type { Effect } from "../bridge/core";
import { createBody, promptBody, type Perform } from "./effects";

/** Where OpenCode's server listens, and the headers its own client sends (directory, auth). */
export interface DirectServer {
  url: string;
  headers: Record<string, string>;
}

/** OpenCode's placeholder for the plugin's client when its server does not listen. */
const PLACEHOLDER = "http://localhost:4096/";

/** The server to talk to directly, or undefined when the client is in-process. */
export function directServer(client: unknown, serverUrl: URL | undefined, enabled: boolean): DirectServer | undefined {
  if (!enabled || !serverUrl) return undefined;
  const cfg = (client as any)?._client?.getConfig?.();
  let base: string;
  try {
    base = new URL(cfg?.baseUrl).href;
  } catch {
    return undefined;
  }
  if (base !== serverUrl.href || base === PLACEHOLDER) return undefined;
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(cfg.headers ?? {})) if (typeof v === "string") headers[k] = v;
  return { url: base, headers };
}

/**
 * perform, with what lies on a launch's and a notice's way sent straight to server: creating the
 * child session, prompting it, reading its messages when it goes idle, and the notice itself.
 */
export function directly(server: DirectServer, perform: Perform): Perform {
  const call = async (what: string, path: string, body?: unknown): Promise<Response> => {
    const res = await fetch(new URL(path, server.url), {
      method: body === undefined ? "GET" : "POST",
      headers: body === undefined ? server.headers : { ...server.headers, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) {
      const text = await res.text().catch(() => "");
      let msg = text || `${res.status} ${res.statusText}`;
      try {
        const e = JSON.parse(text);
        msg = e?.data?.message ?? e?.message ?? e?.name ?? msg;
      } catch {}
      throw new Error(`${what}: ${msg}`);
    }
    return res;
  };
  return async (e: Effect) => {
    // An isolated task's session lives in its worktree's instance: its effects take the client's
    // path, in OpenCode's thread, which records the worktree as this project's before OpenCode
    // starts that instance (shared.ts) and names the directory.
    if ((e as { directory?: string }).directory) return perform(e);
    switch (e.kind) {
      case "session.create": {
        const s = await (await call("creating the session", "session", createBody(e))).json();
        return { id: s?.id };
      }
      case "session.promptAsync":
        await call("prompting the session", `session/${encodeURIComponent(e.sessionID ?? "")}/prompt_async`, promptBody(e));
        return null;
      case "session.messages":
        return (await call("reading the messages", `session/${encodeURIComponent(e.sessionID ?? "")}/message${e.limit ? `?limit=${e.limit}` : ""}`)).json();
    }
    return perform(e);
  };
}
