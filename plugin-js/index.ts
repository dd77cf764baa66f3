// asyncagents: background subagents for OpenCode. The decisions are made by the Go core (a
// WebAssembly module next to this file); this plugin feeds it OpenCode's tool calls and events
// and carries out what it asks.
//
// OpenCode calls every export of a plugin module as a plugin, so this module exports the plugin
// function and nothing else.

import type { Plugin } from "@opencode-ai/plugin";
import manifest from "../dist/manifest.json";
import { API_TOKEN_BYTES, ENV_API_AUTH, ENV_API_PORT, HOOK_COMPACTING, HOOK_STOPPING, HOOK_TURN_END, STOP_GRACE_MS, compile, type CoreConfig, type ToolSpec } from "../bridge/core";
import { makeExecutor, type Client } from "./effects";
import { directServer } from "./direct";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { fileURLToPath } from "node:url";
import { startLocal, type CoreSetup, type Log, type Perform } from "./local";
import { DISPOSE_GRACE_MS, WorkerCore, type CoreHost } from "./remote";
import { inWorker } from "./core_thread";
import { profileSeen, profiling } from "./profile";
import { forgetAtProcessEnd, stopWithProcess } from "./process_end";
import { within } from "./server";
import { coreFor, leaveCore, projectPath, SharedCore, stoppingCore, whenStopped } from "./shared";
import { makeTools } from "./tools";
import { headlessConfig, headlessRun } from "./headless";
import { TmuxPanes, tmuxConfig } from "./tmux";

// Read at run time through a computed key: `bun build` replaces a literal process.env.NODE_ENV
// with "development" when it bundles, which would mark every user's notices.
function readEnv(name: string): string | undefined {
  return process.env[name];
}

// How long a compaction waits for the core's list of tasks before it goes on without it.
const COMPACTING_WAIT_MS = 2000;

// Compiled once per process, for the instances that run in OpenCode's thread (see startCore).
let compiled: Promise<WebAssembly.Module> | undefined;

// Options come from opencode.json: "plugin": [["asyncagents", { "maxResultChars": 20000 }]]. The
// core reads them (see core/config/config.go) and refuses a wrongly typed one by name. The config files
// (asyncagents.json/.jsonc, global and per project) are layered over them by the core at load
// (core/config/file.go); the Runtime reads them.
export const AsyncAgents: Plugin = async (input, options) => {
  const { client, directory } = input;
  // post answers when OpenCode has written the line. Logging must never fail a task: errors from
  // the log endpoint are dropped.
  const post = async (level: string, message: string): Promise<void> => {
    try {
      await (client as any).app?.log?.({ body: { service: "asyncagents", level: level === "warn" ? "warn" : level === "error" ? "error" : "info", message } });
    } catch {}
  };
  const log: Log = (level, message) => void post(level, message);
  // The status API's bearer token: random per process, written only to server.json (mode 0600).
  const token = randomBytes(API_TOKEN_BYTES).toString("hex");
  const startedAt = Date.now();
  // The user's api options (maxSubscribers) pass through; the token, the auth switch and the start
  // time are the plugin's own; $ASYNCAGENTS_API_AUTH goes to the core as it is, which decides
  // what it means. An api that is not an object goes to the core as it is, which refuses it by
  // name.
  const userAPI = options?.api;
  const ownAPI = { token, auth: readEnv(ENV_API_AUTH), startedAt };
  const isObject = userAPI !== null && typeof userAPI === "object" && !Array.isArray(userAPI);
  const headless = headlessRun(process.argv);
  const setup: CoreSetup = {
    // The options go to the core as the user wrote them, checked there as a config file is (a
    // wrong type is named with its field, and the status API stays up); config holds what the
    // plugin sets itself.
    options: options ?? undefined,
    config: {
      development: readEnv("NODE_ENV") === "development",
      api: (userAPI === undefined ? ownAPI : isObject ? { ...userAPI, ...ownAPI } : userAPI) as CoreConfig["api"],
      tmux: tmuxConfig(options?.tmux, readEnv("TMUX")) as CoreConfig["tmux"],
      headless: headlessConfig(options?.headless, headless) as CoreConfig["headless"],
    },
    env: {
      xdgDataHome: readEnv("XDG_DATA_HOME"),
      xdgConfigHome: readEnv("XDG_CONFIG_HOME"),
      home: homedir(),
      directory: projectPath(directory),
      apiPort: readEnv(ENV_API_PORT),
      pid: process.pid,
    },
    token,
    startedAt,
    apiEnabled: readEnv("ASYNCAGENTS_API_ENABLED") !== "false",
    direct: directServer(client, input.serverUrl, readEnv("ASYNCAGENTS_DIRECT") !== "false"),
    // Next to the bundle (dist/); from the source, the committed build.
    dashboardPath: fileURLToPath(new URL(import.meta.url.endsWith(".ts") ? "../host/dashboard/dashboard.html" : "./dashboard.html", import.meta.url)),
  };
  // serverUrl is read at each pane: OpenCode may start listening after the plugin loads.
  await whenStopped(directory); // a reload: the previous core first lets go of the history
  const { shared, user, first } = coreFor(directory, () => {
    const panes = new TmuxPanes({ serverUrl: () => input.serverUrl, directory, log, endWithProcess: stopWithProcess });
    const perform = makeExecutor(client as unknown as Client, directory, panes);
    return new SharedCore(startCore(setup, perform, log), panes);
  });
  if (!first) log("info", "asyncagents: OpenCode started another instance of this project; it shares the running core");
  else if (setup.direct) log("info", `asyncagents: launches and notices go straight to OpenCode's server at ${setup.direct.url}`);
  const subscribed = new Set<string>(manifest.subscribe);
  let disposed = false;
  // A headless run (core/headless.go): the core holds the end of a turn while its tasks run (as it
  // does a subagent's), and a signal has it cancel them, their partial work recorded, before the
  // process ends.
  const hook = (name: string, sessionID = "", messageID = "") => shared.host.callTool(name, {}, { sessionID, messageID, agent: "" });
  if (headless && first) {
    log("info", "asyncagents: a non-interactive run: its turns end once their background tasks have reported");
    const stopping = async (graceMs = STOP_GRACE_MS) => void (await within(hook(HOOK_STOPPING).catch(() => undefined), graceMs));
    stopWithProcess({ stop: stopping, atExit() {} });
  }
  return {
    tool: makeTools(manifest.tools as ToolSpec[], shared.host),
    event: async ({ event }) => {
      if (profiling) profileSeen("event.seen", event);
      if (subscribed.has(event.type) && !disposed) shared.feed(user, { type: "opencode", event: event as any });
    },
    // A compaction keeps this session's tasks: the core names them for the summary to keep
    // (core/compaction.go). A failure here must never fail OpenCode's compaction.
    "experimental.session.compacting": async (input, output) => {
      if (disposed) return;
      try {
        let answer: { output: string } | undefined;
        const asked = hook(HOOK_COMPACTING, input.sessionID).then((a) => (answer = a));
        await within(asked, COMPACTING_WAIT_MS);
        if (answer?.output) output.context.push(answer.output);
      } catch {}
    },
    // Awaited by OpenCode at the end of each text part of an answer: the core answers when the
    // turn may end (a headless run's, a subagent's: core/nested_turns.go); at once for any other
    // session. A failure lets the turn end.
    "experimental.text.complete": async (input: { sessionID: string; messageID: string }) => {
      if (disposed) return;
      try {
        await hook(HOOK_TURN_END, input.sessionID, input.messageID);
      } catch {}
    },
    // OpenCode disposes an instance when it reloads it (the next request starts a new one, with
    // a new plugin that restores the same history) and when it ends. When the last instance
    // sharing the core goes, everything the plugin started stops with it: its API server and
    // server.json, its core and timers, its panes.
    dispose: async () => {
      if (disposed) return;
      disposed = true;
      // A dispose's line is awaited (for a bounded time): OpenCode may end the process as soon as
      // the last dispose returns, and a line still in flight would then be lost.
      if (!leaveCore(directory, shared, user)) {
        await within(post("info", "asyncagents: OpenCode disposed an instance of this project; another one still uses the core"), DISPOSE_GRACE_MS);
        return;
      }
      const said = within(post("info", "asyncagents: OpenCode disposed this instance; the core, its status API and its panes stop"), DISPOSE_GRACE_MS);
      forgetAtProcessEnd(shared.panes);
      await Promise.all([said, stoppingCore(directory, Promise.allSettled([shared.host.dispose(), shared.panes.stop(DISPOSE_GRACE_MS)]))]);
    },
  };
};

// startCore runs the core where its effects go fastest (see inWorker). In a Worker next to this
// file (asyncagents-worker.js), the history's restore and the status API's answers never wait on
// OpenCode's event loop, which OpenCode's own work keeps busy; on OpenCode's thread, an event's
// effects reach OpenCode's client in the same turn of that loop. A missing worker file runs it in
// OpenCode's thread too. Either way, on SIGINT/SIGTERM the API's answers in flight finish
// first, for STOP_GRACE_MS at most, and the signal then ends the
// process as it would have (see stopWithProcess); on exit, server.json goes.
function startCore(setup: CoreSetup, perform: Perform, log: Log): CoreHost {
  const wasmURL = new URL("./asyncagents.wasm", import.meta.url);
  const workerURL = new URL(import.meta.url.endsWith(".ts") ? "./worker.ts" : "./asyncagents-worker.js", import.meta.url);
  if (inWorker(readEnv("ASYNCAGENTS_WORKER"), setup.direct !== undefined) && typeof Worker !== "undefined" && existsSync(fileURLToPath(workerURL))) {
    try {
      const remote = new WorkerCore(workerURL, wasmURL, setup, perform, log);
      if (setup.apiEnabled) stopWithProcess(remote);
      return remote;
    } catch (err) {
      log("warn", `asyncagents: no worker (${(err as Error).message}); the core runs in OpenCode's thread`);
    }
  }
  compiled ??= Bun.file(wasmURL).arrayBuffer().then(compile);
  const { runtime, api, followers, effects } = startLocal(compiled, setup, perform, log, undefined, "opencode thread");
  if (api) stopWithProcess(api);
  return {
    callTool: (tool, args, ctx) => runtime.callTool(tool, args, ctx),
    feed: (ev) => void runtime.feed(ev),
    dispose: async () => {
      if (api) forgetAtProcessEnd(api);
      await Promise.all([api?.stop(DISPOSE_GRACE_MS), effects.drain(DISPOSE_GRACE_MS)]);
      followers.stop();
      runtime.dispose();
    },
  };
}

