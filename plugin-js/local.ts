// Assembles the core's runtime and the status API server in the current thread. The plugin runs
// this inside a Worker (worker.ts), so that neither the history's restore nor an API request
// waits on OpenCode's event loop; it runs it in OpenCode's own thread only when no Worker can
// start (see index.ts).

import { readFileSync } from "node:fs";
import type { CoreConfig, Effect } from "../bridge/core";
import { fileHistory } from "./history";
import { Runtime, type StorageEnv } from "./runtime";
import { ApiServer, type ApiDeps, type OwnFile } from "./server";
import { directly, type DirectServer } from "./direct";
import { drainable, type DrainablePerform } from "./perform_drain";
import type { Perform } from "./effects";
import { onWorkers } from "./workers_effects";
import { WorkerFollowers } from "./workers_follow";

/** Everything the core's side needs, as plain data: it crosses to the Worker by postMessage. */
export interface CoreSetup {
  /** What the plugin sets itself (development, the status API's token, tmux.inside). */
  config: CoreConfig;
  /** The plugin options of opencode.json as written: the core checks and applies them. */
  options?: unknown;
  env: StorageEnv;
  /** The status API's bearer token, and the plugin's start time (server.json's startedAt). */
  token: string;
  startedAt: number;
  apiEnabled: boolean;
  /** OpenCode's server, when it is this process's own: launches and notices go to it directly. */
  direct?: DirectServer;
  /** The dashboard's page (dashboard.html, next to the plugin), served at the status API's /. */
  dashboardPath?: string;
}

export type { Perform } from "./effects";
export type Log = (level: string, message: string) => void;

/**
 * Starts the runtime over module, and the status API once the core is configured (before the
 * history's restore, see serve). onServer hears where server.json was written, so the thread
 * that owns the process's signals can remove it; thread names where this runs, for the load
 * log line.
 */
export function startLocal(
  module: Promise<WebAssembly.Module>,
  setup: CoreSetup,
  perform: Perform,
  log: Log,
  onServer?: (file: OwnFile) => void,
  thread?: string,
): { runtime: Runtime; api?: ApiServer; followers: WorkerFollowers; effects: DrainablePerform } {
  // The server binds as soon as the core says where (its ports and server.json), before the
  // history is restored: a client that finds server.json waits for the restore in the socket's
  // queue instead of finding nothing, and binding is off the restart's critical path.
  let api: ApiServer | undefined;
  const serve = () => {
    const storage = runtime.storagePaths;
    if (!api || !storage) return;
    const auth = (setup.config.api as { auth?: string } | undefined)?.auth;
    let file: OwnFile | undefined;
    const port = api.start(storage.apiPorts, storage.serverJSON, (port, url) => {
      const content = runtime.serverFile({ port, pid: process.pid, startedAt: new Date(setup.startedAt).toISOString(), url, token: setup.token, auth });
      file = { path: storage.serverJSON, content };
      return content;
    });
    if (port === undefined || !file) {
      log("error", "asyncagents: the status API could not bind any port");
      return;
    }
    // The core makes task frames only while a stream reads them: none is open yet. Said once the
    // core's start is done (this runs before its history is restored, which comes first).
    queueMicrotask(() => void runtime.feed({ type: "api.streams", open: api!.subscribers }));
    // Once per start, without the token: OpenCode's log is no place for it (the server file, mode
    // 0600, holds it; asyncagents dashboard reads it from there).
    log("info", `asyncagents: dashboard at http://127.0.0.1:${port}/ (open it with: asyncagents dashboard)`);
    onServer?.(file);
  };
  if (setup.direct) perform = directly(setup.direct, perform);
  // The workers' streams feed the core; an effect naming a worker goes to that worker.
  const followers = new WorkerFollowers((ev) => void runtime.feed(ev));
  // Stopped (drain) before the thread ends: see perform_drain.ts.
  const effects = drainable(onWorkers(perform, followers));
  perform = effects;
  const runtime = new Runtime(module, setup.config, perform, log, {
    env: setup.env,
    open: fileHistory,
    thread,
    onConfigured: setup.apiEnabled ? serve : undefined,
    startedAt: setup.startedAt,
    options: setup.options,
  });
  if (!setup.apiEnabled) return { runtime, followers, effects };
  api = new ApiServer({
    http: (req) => runtime.http(req),
    logs: sessionMessages((e) => runtime.run(e)),
    conversation: (messages) => runtime.conversation(messages),
    log,
    asset: (name) => (name === "dashboard" ? dashboardPage(setup.dashboardPath, log) : undefined),
    streams: (open) => void runtime.feed({ type: "api.streams", open }),
  });
  runtime.onBroadcast((frame) => api!.broadcast(frame));
  return { runtime, api, followers, effects };
}

/**
 * The status API's read of a child session's messages (/logs, /messages): on its worker when the
 * core's answer names one (the effect then goes there, see onWorkers), else on the local OpenCode.
 */
export function sessionMessages(run: (e: Effect) => Promise<unknown>): ApiDeps["logs"] {
  return (sessionID, where) => run({ id: 0, kind: "session.messages", sessionID, ...(where.worker ? where : {}) });
}

let page: Uint8Array<ArrayBuffer> | undefined;
let pageMissing = false;

/** The dashboard's page, read once; undefined (and logged once) when the file is missing. */
function dashboardPage(path: string | undefined, log: Log): Uint8Array<ArrayBuffer> | undefined {
  if (page || pageMissing || !path) return page;
  try {
    page = new Uint8Array(readFileSync(path));
  } catch (err) {
    pageMissing = true;
    log("error", `asyncagents: the dashboard's page could not be read: ${(err as Error).message}`);
  }
  return page;
}
