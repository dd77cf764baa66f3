// Where the terminal UI module gets its rows: the plugin's own status API, found through this
// process's server file (the plugin runs in a Worker of the same process, so the file is
// <pid>.json), read with the file's token. The core answers the views already ordered, marked and
// formatted (GET /v1/views/...); the event stream says when to read them again. Nothing here
// decides what a row says.

import { readdirSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { readEvents } from "../../bridge/sse";
import { DATA_HOME_DEFAULT, SERVER_DIR_PREFIX, SERVER_FILE_EXT, STORAGE_DIR_NAME, type ViewList, type ViewSection } from "../../bridge/types";

export interface ServerInfo {
  url: string;
  token: string;
  port: number;
}

/**
 * This process's server file, or undefined while the plugin has written none (its core is still
 * loading, or its API is off). Each project OpenCode opened in this process has its folder; the
 * newest file wins.
 */
export function findServer(env: Record<string, string | undefined>, pid: number): ServerInfo | undefined {
  // The core's names (core/storage.go): the data directory, the storage folder in it, the
  // projects' folders of server files, and each file's name after its pid.
  const data = env.XDG_DATA_HOME || join(env.HOME || homedir(), DATA_HOME_DEFAULT);
  const dir = join(data, STORAGE_DIR_NAME);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return undefined;
  }
  let best: { info: ServerInfo; mtime: number } | undefined;
  for (const name of names) {
    if (!name.startsWith(SERVER_DIR_PREFIX)) continue;
    const file = join(dir, name, `${pid}${SERVER_FILE_EXT}`);
    try {
      const mtime = statSync(file).mtimeMs;
      const f = JSON.parse(readFileSync(file, "utf8")) as { url?: string; token?: string; port?: number; pid?: number };
      if (f.pid !== pid || !f.url || !f.port) continue;
      if (!best || mtime > best.mtime) best = { info: { url: f.url, token: f.token ?? "", port: f.port }, mtime };
    } catch {
      // absent, or being replaced: the next look finds it
    }
  }
  return best?.info;
}

/** The status API as the module uses it. */
export class ViewClient {
  constructor(readonly server: ServerInfo) {}

  private headers(): Record<string, string> {
    return this.server.token ? { Authorization: `Bearer ${this.server.token}` } : {};
  }

  private async get<T>(path: string): Promise<T> {
    const res = await fetch(this.server.url + path, { headers: this.headers() });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  }

  section(sessionID: string): Promise<ViewSection> {
    return this.get(`/v1/views/session/${encodeURIComponent(sessionID)}`);
  }

  /** The /tasks list, its rows matching query (the core's filter, which keeps them newest first). */
  list(query = ""): Promise<ViewList> {
    return this.get("/v1/views/tasks" + (query ? `?q=${encodeURIComponent(query)}` : ""));
  }

  /**
   * Cancels a task as asyncagents_cancel does: POST /v1/tasks/:id/cancel, which takes a request
   * of the server's own Origin only. Resolves to the error text, or undefined when it was done.
   */
  async cancel(taskID: string, reason: string): Promise<string | undefined> {
    const res = await fetch(`${this.server.url}/v1/tasks/${encodeURIComponent(taskID)}/cancel?reason=${encodeURIComponent(reason)}`, {
      method: "POST",
      headers: { ...this.headers(), Origin: `http://127.0.0.1:${this.server.port}` },
    });
    if (res.ok) return undefined;
    const text = await res.text();
    try {
      return (JSON.parse(text) as { error?: string }).error ?? text;
    } catch {
      return text;
    }
  }

  /**
   * Calls changed() for every task frame of the event stream (not heartbeats), until signal
   * aborts or the stream ends; resolves then.
   */
  async follow(changed: () => void, signal: AbortSignal): Promise<void> {
    const res = await fetch(this.server.url + "/v1/events", { headers: this.headers(), signal });
    if (!res.ok || !res.body) throw new Error(`/v1/events: ${res.status}`);
    await readEvents(res.body, (name) => {
      if (name !== "heartbeat") changed();
    });
  }
}
