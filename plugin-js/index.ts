// asyncagents: background subagents for OpenCode. The decisions are made by the Go core (a
// WebAssembly module next to this file); this plugin feeds it OpenCode's tool calls and events
// and carries out what it asks.
//
// OpenCode calls every export of a plugin module as a plugin, so this module exports the plugin
// function and nothing else.

import type { Plugin } from "@opencode-ai/plugin";
import manifest from "../dist/manifest.json";
import { compile, type CoreConfig, type ToolSpec } from "../bridge/core";
import { makeExecutor, type Client } from "./effects";
import { randomBytes } from "node:crypto";
import { homedir } from "node:os";
import { ApiServer, stopWithProcess } from "./server";
import { fileHistory } from "./history";
import { Runtime } from "./runtime";
import { makeTools } from "./tools";
import { TmuxPanes, tmuxConfig } from "./tmux";

// Read at run time through a computed key: `bun build` replaces a literal process.env.NODE_ENV
// with "development" when it bundles, which would mark every user's notices.
function readEnv(name: string): string | undefined {
  return process.env[name];
}

// One compile per process: OpenCode loads the plugin once per project directory, and every
// instance of the core can share the compiled module.
let compiled: Promise<WebAssembly.Module> | undefined;

// Options come from opencode.json: "plugin": [["asyncagents", { "maxResultChars": 20000 }]]. The
// core reads them (see core/config.go) and refuses a wrongly typed one by name. The config files
// (asyncagents.json/.jsonc, global and per project) are layered over them by the core at load
// (core/fileconfig.go); the Runtime reads them.
export const AsyncAgents: Plugin = async (input, options) => {
  const { client, directory } = input;
  compiled ??= Bun.file(new URL("./asyncagents.wasm", import.meta.url)).arrayBuffer().then(compile);
  const log = (level: string, message: string) => {
    const app = (client as any).app;
    // Logging must never fail a task: errors from the log endpoint are dropped.
    app?.log?.({ body: { service: "asyncagents", level: level === "warn" ? "warn" : level === "error" ? "error" : "info", message } })?.catch?.(() => {});
  };
  // The status API's bearer token: random per process, written only to server.json (mode 0600).
  const token = randomBytes(32).toString("hex");
  const startedAt = Date.now();
  // The user's api options (maxSubscribers) pass through; the token, the auth switch and the start
  // time are the plugin's own. An api that is not an object goes to the core as it is, which
  // refuses it by name.
  const userAPI = options?.api;
  const ownAPI = { token, auth: readEnv("ASYNCAGENTS_API_AUTH") === "none" ? "none" : "token", startedAt };
  const isObject = userAPI !== null && typeof userAPI === "object" && !Array.isArray(userAPI);
  const runtime = new Runtime(
    compiled,
    {
      ...(options ?? {}),
      development: readEnv("NODE_ENV") === "development",
      api: (userAPI === undefined ? ownAPI : isObject ? { ...userAPI, ...ownAPI } : userAPI) as CoreConfig["api"],
      tmux: tmuxConfig(options?.tmux, readEnv("TMUX")) as CoreConfig["tmux"],
    },
    // serverUrl is read at each pane: OpenCode may start listening after the plugin loads.
    makeExecutor(client as unknown as Client, directory, new TmuxPanes({ serverUrl: () => input.serverUrl, directory, log })),
    log,
    {
      env: { xdgDataHome: readEnv("XDG_DATA_HOME"), xdgConfigHome: readEnv("XDG_CONFIG_HOME"), home: homedir(), directory, apiPort: readEnv("ASYNCAGENTS_API_PORT") },
      open: fileHistory,
    },
  );
  if (readEnv("ASYNCAGENTS_API_ENABLED") !== "false") {
    startApi(runtime, token, startedAt, log);
  }
  const subscribed = new Set<string>(manifest.subscribe);
  return {
    tool: makeTools(manifest.tools as ToolSpec[], runtime),
    event: async ({ event }) => {
      if (subscribed.has(event.type)) runtime.feed({ type: "opencode", event: event as any });
    },
  };
};

// startApi starts the status API once the core is loaded (it answers every request). When the
// process ends, server.json goes; on SIGINT/SIGTERM the answers in flight finish first, for two
// seconds at most, and the signal then ends the process as it would have (see stopWithProcess).
function startApi(runtime: Runtime, token: string, startedAt: number, log: (level: string, message: string) => void) {
  const api = new ApiServer({
    http: (req) => runtime.http(req),
    logs: (sessionID) => runtime.run({ id: 0, kind: "session.messages", sessionID }),
    log,
  });
  runtime.onBroadcast((frame) => api.broadcast(frame));
  void runtime.whenReady().then(() => {
    const storage = runtime.storagePaths;
    if (!storage) return;
    const port = api.start(storage.apiPorts, storage.serverJSON, token, startedAt);
    if (port === undefined) {
      log("error", "asyncagents: the status API could not bind any port");
      return;
    }
    stopWithProcess(api);
  });
}
