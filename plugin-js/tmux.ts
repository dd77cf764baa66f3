// Carries out tmux.open and tmux.close: a tmux pane running `opencode attach <server> --session
// <id>` for each running child, closed when its task ends. The core decides when (only with
// tmux.enabled, and inside tmux) and where (a task on a worker: that worker's server, with its
// basic auth); this file only runs tmux. A pane is a convenience: every
// failure is logged, nothing here throws, and no tmux command runs longer than timeoutMs.
// The panes are this process's handles: when OpenCode ends, those still open close with it
// (endWithProcess), or they would hold attach TUIs to a server that is gone.

import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { TMUX_PANE_ENV, type Remote } from "../bridge/types";
import { scrub } from "./workers_client";

type Log = (level: string, message: string) => void;

/** Where a pane attaches, as tmux.open says: a task on a worker names it and how to reach it. */
export interface PaneTarget {
  worker?: string;
  remote?: Remote;
}

export interface TmuxOptions {
  /** OpenCode's server, read at each open: the plugin input's serverUrl. */
  serverUrl: () => URL | string | undefined;
  /** The project directory: the pane starts there and attaches to it. */
  directory?: string;
  /** The program the pane runs; default: the OpenCode binary this plugin runs in, else `opencode`. */
  opencode?: string;
  /** The environment tmux runs in ($TMUX names the server, $TMUX_PANE OpenCode's pane); default process.env. */
  env?: Record<string, string | undefined>;
  log: Log;
  /** Bounds each tmux command and the server check. Default 5000 ms. */
  timeoutMs?: number;
  tmux?: string;
  /** Called once, when the first pane opens, to tie the panes to the process's end (stopWithProcess). */
  endWithProcess?: (panes: TmuxPanes) => void;
}

/** How long the process's 'exit' waits on tmux for each pane it closes. */
const EXIT_KILL_TIMEOUT_MS = 1000;

/** The OpenCode program to attach with: the binary running this plugin, when it is OpenCode's. */
export function opencodeProgram(execPath: string = process.execPath): string {
  return /^opencode(\.exe)?$/i.test(basename(execPath)) ? execPath : "opencode";
}

export class TmuxPanes {
  /** The pane of each child whose pane is open or opening. */
  private readonly panes = new Map<string, Promise<string | undefined>>();
  /** The child panes in the order they opened: a new pane splits the newest one still open. */
  private readonly order: string[] = [];
  private readonly reachable = new Set<string>();
  private tied = false;
  private stopping?: Promise<void>;

  constructor(private readonly opt: TmuxOptions) {}

  /** Opens a pane attached to sessionID (on target's worker, if any); resolves once tmux answered (or failed). */
  open(sessionID: string, title?: string, target: PaneTarget = {}): Promise<void> {
    if (this.stopping) return Promise.resolve(); // the process is ending
    if (this.panes.has(sessionID)) return this.panes.get(sessionID)!.then(() => {});
    const pane = this.split(sessionID, title ?? sessionID, target).catch((err) => {
      const where = target.worker ? ` on worker ${target.worker}` : "";
      const text = target.remote ? scrub(errorText(err), target.remote, this.opt.env) : errorText(err);
      this.opt.log("warn", `asyncagents: no tmux pane for ${sessionID}${where}: ${text}`);
      return undefined;
    });
    this.panes.set(sessionID, pane);
    return pane.then(() => {});
  }

  /** Closes sessionID's pane, once its open has finished. */
  async close(sessionID: string): Promise<void> {
    const pending = this.panes.get(sessionID);
    if (!pending) return;
    this.panes.delete(sessionID);
    const pane = await pending;
    if (!pane) return;
    this.forget(pane);
    try {
      await this.tmux(["kill-pane", "-t", pane]);
    } catch (err) {
      // The user may have closed it already.
      this.opt.log("info", `asyncagents: closing tmux pane ${pane} of ${sessionID}: ${errorText(err)}`);
    }
  }

  /**
   * On SIGINT/SIGTERM, or when OpenCode disposes the plugin: closes every pane still open, once
   * the opens under way have finished (within graceMs), and opens no more.
   */
  stop(graceMs = this.timeout): Promise<void> {
    this.stopping ??= (async () => {
      const all = [...this.panes.keys()];
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
      await Promise.race([Promise.allSettled(all.map((id) => this.close(id))), late]);
      clearTimeout(timer);
    })();
    return this.stopping;
  }

  /**
   * On 'exit': kills the panes open now, synchronously (an exit handler can do nothing else).
   * A pane whose open tmux has not answered yet is beyond reach.
   */
  atExit(): void {
    for (const pane of this.order.splice(0)) {
      try {
        execFileSync(this.opt.tmux ?? "tmux", ["kill-pane", "-t", pane], { env: this.env(), timeout: EXIT_KILL_TIMEOUT_MS, stdio: "ignore", killSignal: "SIGKILL" });
      } catch {}
    }
    this.panes.clear();
  }

  /** The pane IDs open now, by session. */
  async list(): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const [id, p] of this.panes) {
      const pane = await p;
      if (pane) out.set(id, pane);
    }
    return out;
  }

  private async split(sessionID: string, title: string, target: PaneTarget): Promise<string> {
    const env = this.opt.env ?? process.env;
    if (!env.TMUX) throw new Error("$TMUX is not set");
    const remote = target.worker ? target.remote : undefined;
    if (target.worker && !remote?.url) throw new Error("the effect says nowhere how to reach the worker");
    const url = remote ? remote.url : String(this.opt.serverUrl() ?? "");
    if (!url) throw new Error("OpenCode did not give its server URL");
    if (!remote) await this.checkServer(url); // a worker's stream is up, or the core placed nothing there
    const command = [this.opt.opencode ?? opencodeProgram(), "attach", url, "--session", sessionID];
    const common = ["-d", "-P", "-F", "#{pane_id}"];
    if (this.opt.directory) {
      common.push("-c", this.opt.directory); // the pane itself runs on this machine
      // Not for a worker: the attach TUI follows the session's own directory anyway, and attach
      // would chdir into a path of this machine that happens to bear the worker's path's name.
      if (!remote) command.push("--dir", this.opt.directory);
    }
    // The pane gets tmux's environment, not OpenCode's: pass on the server's basic auth, a
    // worker's own for a worker's pane (never the local server's), by a file the pane reads and
    // removes (authHandoff), never on a command line, which any user's `ps` shows.
    const auth = (remote ? workerAuth(remote, env) : TMUX_PANE_ENV.map((k): [string, string] => [k, env[k] ?? ""])).filter(([, v]) => v);
    const handoff = auth.length > 0 ? authHandoff(auth) : undefined;
    const run = handoff ? handoff.wrap(command) : command;
    // The first child splits OpenCode's pane side by side; later ones split the newest child
    // pane, so OpenCode keeps its half. A target that is gone falls back to OpenCode's pane.
    const targets: string[][] = [];
    const newest = this.order[this.order.length - 1];
    if (newest) targets.push(["-v", "-t", newest]);
    targets.push(env.TMUX_PANE ? ["-h", "-t", env.TMUX_PANE] : ["-h"]);
    let lastErr: unknown;
    for (const split of targets) {
      try {
        const out = await this.tmux(["split-window", ...split, ...common, "--", ...run]);
        const pane = out.trim();
        if (!pane.startsWith("%")) throw new Error(`tmux answered ${JSON.stringify(out)}`);
        this.order.push(pane);
        if (!this.tied) {
          this.tied = true;
          this.opt.endWithProcess?.(this);
        }
        const where = target.worker ? ` on worker ${target.worker}` : "";
        this.opt.log("info", `asyncagents: tmux pane ${pane} for "${title}" (${sessionID})${where}`);
        return pane;
      } catch (err) {
        lastErr = err;
      }
    }
    handoff?.remove(); // no pane started to read it
    throw lastErr;
  }

  /**
   * `opencode attach` needs OpenCode's server to listen. The TUI listens only when started with
   * --port (or --hostname, --mdns); otherwise serverUrl names a default where nothing answers,
   * and a pane would flash an error and vanish. Checked once per URL until it answers.
   */
  private async checkServer(url: string): Promise<void> {
    if (this.reachable.has(url)) return;
    try {
      await fetch(new URL("/global/health", url), { signal: AbortSignal.timeout(this.timeout) });
    } catch (err) {
      throw new Error(`OpenCode's server does not answer at ${url} (${errorText(err)}); start OpenCode with --port so that \`opencode attach\` can reach it`);
    }
    this.reachable.add(url);
  }

  private forget(pane: string): void {
    const i = this.order.indexOf(pane);
    if (i >= 0) this.order.splice(i, 1);
  }

  private get timeout(): number {
    return this.opt.timeoutMs ?? 5000;
  }

  private env(): Record<string, string> {
    return Object.fromEntries(Object.entries(this.opt.env ?? process.env).filter((kv): kv is [string, string] => kv[1] !== undefined));
  }

  private tmux(args: string[]): Promise<string> {
    const env = this.env();
    return new Promise((resolve, reject) => {
      execFile(this.opt.tmux ?? "tmux", args, { env, timeout: this.timeout, killSignal: "SIGKILL" }, (err, stdout, stderr) => {
        if (err) {
          // Never err.message: it quotes the command line (which holds no password, but the
          // reason is better told by tmux itself).
          const detail = String(stderr ?? "").trim() || failure(err, this.timeout);
          reject(new Error(`tmux ${args[0]}: ${detail}`));
        } else resolve(String(stdout));
      });
    });
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * A worker pane's basic auth, as `opencode attach` reads it from its environment: the worker's
 * username, and its password read from the variable the core names (the core never has it).
 */
function workerAuth(remote: Remote, env: Record<string, string | undefined>): [string, string][] {
  const password = env[remote.passwordEnv];
  if (!remote.passwordEnv || !password) throw new Error(`environment variable ${remote.passwordEnv || "(none named)"} is not set`);
  return [
    ["OPENCODE_SERVER_USERNAME", remote.username || "opencode"],
    ["OPENCODE_SERVER_PASSWORD", password],
  ];
}

/**
 * Hands a pane its credentials through a file: written mode 0600 in a fresh directory of mode
 * 0700, read by the pane's shell, which removes the directory before it runs the command.
 */
function authHandoff(vars: [string, string][]): { wrap(command: string[]): string[]; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "asyncagents-pane-"));
  writeFileSync(join(dir, "env"), vars.map(([k, v]) => `export ${k}=${shellQuoted(v)}\n`).join(""), { mode: 0o600 });
  return {
    wrap: (command) => ["sh", "-c", 'd=$1; shift; . "$d/env"; rm -rf "$d"; exec "$@"', "sh", dir, ...command],
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** s as one word of sh, whatever it holds. */
function shellQuoted(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** Why a tmux command failed, without its command line. */
function failure(err: Error & { code?: unknown; killed?: boolean; signal?: unknown }, timeoutMs: number): string {
  if (err.killed) return `no answer within ${timeoutMs} ms`;
  if (typeof err.code === "number") return `exited with code ${err.code}`;
  if (err.signal) return `ended by ${err.signal}`;
  return typeof err.code === "string" ? `cannot run tmux (${err.code})` : "failed";
}

/**
 * The core's tmux config: the user's (opencode.json: "tmux": {"enabled": true}) with inside set
 * from $TMUX, which only the host can see. A tmux option that is not an object goes to the core
 * as it is, which refuses it by name.
 */
export function tmuxConfig(user: unknown, tmuxEnv: string | undefined): unknown {
  const inside = !!tmuxEnv;
  if (user === undefined) return { inside };
  if (user === null || typeof user !== "object" || Array.isArray(user)) return user;
  return { ...user, inside };
}
