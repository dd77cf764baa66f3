// The plugin's side of the sans-IO loop: feed the core an event, carry out the effects it returns,
// feed back their results. Timers and pending tool calls live here because they are handles the
// core cannot hold; what they mean is the core's business.

import {
  FOLLOW_INTERVAL_MS,
  FOLLOW_WATCHED_INTERVAL_MS,
  API_ERR_CORE_UNAVAILABLE,
  API_ERR_STARTING,
  Core,
  CoreTrap,
  type ConfigFile,
  type CoreConfig,
  type CoreEvent,
  type CoreHTTPRequest,
  type CoreHTTPResponse,
  type CoreResponse,
  type Effect,
  type Trap,
} from "../bridge/core";
import { readConfigFiles } from "./config";
import { noHistory, readState, writeMergedState, type History } from "./history";
import { ProjectHistories, procStat } from "./histories";
import { HistoryWrites } from "./history_writes";
import { hop, profileSeen, profileSent, profiling } from "./profile";
import { restartFailed } from "./trap";
import { RETURN_WAIT_MS, type PendingCall, type StorageEnv, type ToolAnswer, type ToolCallContext } from "./runtime_types";
export { RETURN_WAIT_MS, type StorageEnv, type ToolAnswer, type ToolCallContext } from "./runtime_types";
type Perform = (e: Effect) => Promise<unknown>;
type Log = (level: string, message: string) => void;

export class Runtime {
  private core?: Core;
  private readonly ready: Promise<void>;
  private readonly backlog: CoreEvent[] = [];
  private readonly calls = new Map<string, PendingCall>();
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();
  private callSeq = 0;
  private failure?: Error;
  private disposed = false;
  private history: History = noHistory;
  private readonly histories: ProjectHistories;
  private broadcaster?: (frame: string) => void;
  private readonly writes: HistoryWrites;
  /** Where the history and server.json live, once the core has said. */
  storagePaths?: CoreResponse["storage"];
  /** The configuration in force (options and config files, defaults filled in), once loaded. */
  config?: CoreConfig;
  /** Set when a config file is invalid: asyncagents_task then fails with this text. */
  configError?: string;
  /** After a trap, a new instance gets what the first one got (see recover). */
  private module?: WebAssembly.Module;
  private initConfig: CoreConfig;
  private readonly storageEnv: unknown;
  private configFiles: ConfigFile[] = [];
  private traps: Trap[] = [];
  private generation = 0; // counts instances: an effect's result goes back only to the one that asked
  /** Set when the core stopped for good (a trap loop): every call fails with it. */
  private halted?: string;
  private readonly options: unknown; // see the constructor's storage.options
  private readonly write = (fd: number, text: string) => this.log(fd === 2 ? "error" : "info", text);

  constructor(
    module: Promise<WebAssembly.Module>,
    config: CoreConfig,
    private readonly perform: Perform,
    private readonly log: Log,
    storage: {
      env: StorageEnv;
      open: (historyPath: string, indexPath: string) => History;
      readConfig?: (paths: string[]) => ConfigFile[];
      /** Where this runtime runs ("worker", "opencode thread"), for the load log line. */
      thread?: string;
      /**
       * Called once the core is configured, before the history is restored: the status API binds
       * then, and the requests it accepts meanwhile are answered when the restore is done (the
       * restore holds this thread, so none is answered from a half-restored store).
       */
      onConfigured?: () => void;
      /** When the plugin started (ms since the epoch): the load log line counts from there. */
      startedAt?: number;
      options?: unknown; // the plugin options of opencode.json as written: the core checks them
    },
  ) {
    this.initConfig = config;
    this.storageEnv = storage.env;
    this.options = storage.options;
    this.histories = new ProjectHistories(() => this.history, storage.env, log);
    this.writes = new HistoryWrites(() => this.history, log);
    // Compiling the module happens in the background: OpenCode does not wait for it. Events that
    // arrive meanwhile are kept and fed in order.
    // Wall-clock times from the plugin's start: in a Worker, this thread's clock starts later.
    const t0 = storage.startedAt ?? Date.now();
    const marks: string[] = [];
    const mark = (what: string) => marks.push(`${what} +${Date.now() - t0}`);
    mark("runtime");
    this.ready = module
      .then((m) => {
        mark("compiled");
        this.module = m;
        return Core.instantiate(m, this.write);
      })
      .then((core) => {
        mark("instantiated");
        // Where the history and the config files live is the core's call (the Go CLI reads the
        // same history). The storage op is pure, so it comes first: init takes the config files.
        this.storagePaths = core.call({ op: "storage", env: storage.env, procStat: procStat() }).storage!;
        this.configFiles = (storage.readConfig ?? readConfigFiles)(this.storagePaths.configFiles ?? []);
        const init = core.init(config, this.configFiles, [], true, this.options, storage.env);
        this.config = init.config;
        if (init.configError) {
          // The task tool answers with it too; the other tools work on the options alone.
          this.configError = init.configError;
          this.log("error", init.configError);
        }
        this.history = storage.open(this.storagePaths.history, this.storagePaths.historyIndex);
        this.core = core;
        mark("configured");
        if (storage.onConfigured && !this.disposed) {
          storage.onConfigured();
          mark("serving");
        }
        // The history first: tasks from before a restart are back, and those that were running
        // are reconciled, before any new event is handled.
        const restored = this.restore(core);
        const indexed = restored.restore?.indexed ? ` (${restored.restore.indexed} from the index)` : "";
        mark(`restored ${restored.restore?.restored ?? 0} tasks${indexed}`);
        for (const e of restored.effects ?? []) this.carryOut(e);
        this.followOthers();
        mark("followed");
        if (this.history.dir && !this.disposed) {
          this.histories.every({ ms: FOLLOW_INTERVAL_MS, watchedMs: FOLLOW_WATCHED_INTERVAL_MS }, () => this.followOthers());
        }
        this.feed({ type: "start" });
        for (const ev of this.backlog.splice(0)) this.feed(ev);
        mark("started");
        // One line per load, with where its time went (ms since the plugin started).
        const where = storage.thread ? ` (${storage.thread})` : "";
        this.log("info", `asyncagents: core loaded${where}: ${marks.join(", ")}`);
      })
      .catch((err) => {
        this.failure = err instanceof Error ? err : new Error(String(err));
        this.log("error", `asyncagents: the core failed to load: ${this.failure.message}`);
      });
  }

  /**
   * Restores core from the history (this process's log, after taking over those of processes
   * that are gone: see histories.ts) and the model health, as their files hold them now.
   */
  private restore(core: Core): CoreResponse {
    const state = this.guardRead("reading the model health", () => readState(this.storagePaths!.modelHealth));
    const index = () => this.guardRead("reading the task history index", () => this.history!.readIndex());
    return this.histories.restore(core, { op: "restore", now: Date.now(), state }, index);
  }

  /** Applies what the project's other processes appended to their logs (read-only tasks). */
  private followOthers(): void {
    if (!this.core || this.halted) return;
    try {
      this.histories.follow(this.core, (effects) => this.carryOutAll(effects));
    } catch (err) {
      if (err instanceof CoreTrap) this.recover(err);
    }
  }

  /**
   * Replaces the instance that trapped (ABI.md, "Traps") and returns what the failed call answers.
   * The new instance gets the same init, with every trap still kept: the core says whether this is
   * a loop and what the user reads. It is then restored from the history, so running children
   * are reconciled and tracked again. What the old instance left in flight is dropped: its timers,
   * its effects' results (their IDs mean nothing to the new one), its pending tool calls.
   */
  private recover(trap: Error): string {
    this.generation++;
    this.log("error", `asyncagents: the core trapped; making a new instance: ${trap.message}`);
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    const now = Date.now();
    this.traps.push({ at: now, error: trap.message });
    const halt = (message: string): string => {
      this.halted = message;
      this.core = undefined;
      this.log("error", message);
      this.refuseCalls(message);
      return message;
    };
    let core: Core;
    let recovery: CoreResponse["recovery"];
    try {
      core = Core.instantiateSync(this.module!, this.write);
      recovery = core.init(this.initConfig, this.configFiles, this.traps, true, this.options, this.storageEnv).recovery;
    } catch (err) {
      return halt(restartFailed(err));
    }
    if (!recovery) return halt(restartFailed(new Error("init: no recovery in its answer")));
    if (recovery.halt) return halt(recovery.message);
    this.traps = recovery.traps ?? [];
    this.refuseCalls(recovery.message);
    let restored: CoreResponse;
    try {
      restored = this.restore(core);
    } catch (err) {
      return halt(restartFailed(new Error(`restore: ${(err as Error).message}`)));
    }
    this.core = core;
    this.log("error", recovery.message);
    this.carryOutAll(restored.effects ?? []);
    this.followOthers();
    this.feed({ type: "start" });
    return recovery.message;
  }

  /** Answers every tool call still waiting with text: the core that would have answered is gone. */
  private refuseCalls(text: string): void {
    for (const call of this.calls.values()) {
      call.ctx.onAnswer?.({ error: text });
      call.reject(new Error(text));
    }
    this.calls.clear();
  }

  /** Resolves once the core is loaded (or failed to load). */
  whenReady(): Promise<void> {
    return this.ready;
  }

  /**
   * Feeds one event and carries out what the core answers. Never throws: returns the core's error
   * when the step failed (a panic in the core), so a caller waiting on the step can stop waiting.
   */
  feed(ev: CoreEvent): Error | undefined {
    if (this.halted) return new Error(this.halted);
    if (!this.core) {
      if (!this.failure) this.backlog.push(ev);
      return this.failure;
    }
    let effects: Effect[];
    const seen = profiling && ev.type === "opencode" ? ("event" in ev ? [ev.event] : ev.events) : [];
    for (const e of seen) profileSeen("core.seen", e);
    try {
      effects = this.core.step(Date.now(), ev);
      for (const e of seen) profileSeen("core.stepped", e);
    } catch (err) {
      if (err instanceof CoreTrap) return new Error(this.recover(err));
      this.log("error", `asyncagents: core step failed: ${(err as Error).message}`);
      return err as Error;
    }
    this.carryOutAll(effects);
    return undefined;
  }

  /** Sends status API frames (sse.broadcast effects) to fn. */
  onBroadcast(fn: (frame: string) => void): void {
    this.broadcaster = fn;
  }

  /**
   * Answers a status API request from the core's store (the http op), or puts OpenCode's messages
   * in the conversation's shape (the messages op, for /v1/tasks/:id/messages: JSON text). A
   * request that changes state (a cancel) comes back with effects, carried out as a step's.
   */
  http(req: CoreHTTPRequest): CoreHTTPResponse {
    return this.api({ op: "http", now: Date.now(), http: req });
  }

  conversation(messages: string): CoreHTTPResponse {
    return this.api({ op: "messages", history: messages });
  }

  private api(request: Record<string, unknown>): CoreHTTPResponse {
    const unavailable = (error: string) => ({ status: 503, headers: { "Content-Type": "application/json; charset=utf-8" }, body: JSON.stringify({ error }) });
    if (this.halted) return unavailable(this.halted);
    if (!this.core || this.failure) {
      return unavailable(this.failure ? `${API_ERR_CORE_UNAVAILABLE} (${this.failure.message})` : API_ERR_STARTING);
    }
    try {
      const r = this.core.call(request);
      if (r.effects?.length) this.carryOutAll(r.effects);
      return r.http!;
    } catch (err) {
      if (err instanceof CoreTrap) return unavailable(this.recover(err));
      throw err;
    }
  }

  /**
   * The status API's server file for server (the core's format), with this process's start time
   * from /proc/self/stat where there is one: a reader tells this process from a later one with
   * the same pid by it.
   */
  serverFile(server: Record<string, unknown>): string {
    return this.core!.call({ op: "server.file", server, procStat: procStat() }).serverFile!;
  }

  /** Carries out one effect outside a step (the status API reads messages this way). */
  run(e: Effect): Promise<unknown> {
    return this.perform(e);
  }

  /**
   * Runs one tool call through the core and resolves with its answer. Once the core is loaded the
   * call is fed at once, in this turn of the event loop: ctx.onAnswer then hears an immediate
   * answer before this returns.
   */
  callTool(tool: string, args: unknown, ctx: ToolCallContext): Promise<ToolAnswer> {
    if (this.halted) return Promise.reject(new Error(this.halted));
    if (this.core && !this.failure) return this.startCall(tool, args, ctx);
    return this.ready.then(() => this.startCall(tool, args, ctx));
  }

  private startCall(tool: string, args: unknown, ctx: ToolCallContext): Promise<ToolAnswer> {
    if (this.failure) return Promise.reject(new Error(`asyncagents is unavailable: its core failed to load (${this.failure.message})`));
    const callID = ctx.callID ?? `aa_call_${++this.callSeq}`;
    return new Promise<ToolAnswer>((resolve, reject) => {
      this.calls.set(callID, { resolve, reject, ctx });
      ctx.abort?.addEventListener("abort", () => this.feed({ type: "tool.aborted", callID }), { once: true });
      const failed = this.feed({ type: "tool.call", callID, tool, sessionID: ctx.sessionID, messageID: ctx.messageID, agent: ctx.agent, args });
      if (failed && this.calls.delete(callID)) reject(new Error(`asyncagents: internal error: ${failed.message}`));
      // An abort that came while the core loaded fired before the listener was there.
      else if (ctx.abort?.aborted) this.feed({ type: "tool.aborted", callID });
    });
  }

  /**
   * Carries out a step's effects in order. The effects after a tool's answer wait until OpenCode
   * has taken the answer: the tool returns first, and the child session is created after. (Sent
   * at once, 25 session.create requests of one turn reached OpenCode's thread before the 25
   * answers did, and each launch waited for all of them.)
   */
  private carryOutAll(effects: Effect[]): void {
    let gate: Promise<void> | undefined;
    const generation = this.generation;
    for (const e of effects) {
      if (gate) {
        // An instance that trapped meanwhile asked for it: the new one asks anew what it needs.
        gate = gate.then(() => void (generation === this.generation && this.carryOut(e)));
        continue;
      }
      gate = this.carryOut(e);
    }
  }

  /** Carries out one effect; for a tool's answer, returns when OpenCode has taken it. */
  private carryOut(e: Effect): Promise<void> | undefined {
    const generation = this.generation;
    const answered = (ok: boolean, error?: string) => {
      if (generation === this.generation) this.feed({ type: "effect.done", effectID: e.id, ok, error });
    };
    if (this.writes.carryOut(e, answered)) return;
    switch (e.kind) {
      case "tool.reply":
        return this.answer(e);
      case "timer.set": {
        this.clearTimer(e.timerID!);
        if (this.disposed) return; // what is in flight finishes; nothing is scheduled anew
        const t = setTimeout(() => {
          this.timers.delete(e.timerID!);
          this.feed({ type: "timer.fired", timerID: e.timerID! });
        }, e.delayMs ?? 0);
        // A pending timer must never keep OpenCode from exiting.
        (t as any).unref?.();
        this.timers.set(e.timerID!, t);
        return;
      }
      case "timer.clear":
        return void this.clearTimer(e.timerID!);
      case "log":
        return void this.log(e.level ?? "info", `asyncagents: ${e.message}`);
      case "sse.broadcast":
        return void this.broadcaster?.(e.frame!);
      case "state.write":
        if (!this.storagePaths) return;
        return void this.guard("writing the model health", () =>
          writeMergedState(this.storagePaths!.dir, e.file!, (now) => this.core?.call({ op: "state.merge", state: now }).state ?? e.content!),
        );
    }
    if (profiling) profileSent(e);
    const done = (ok: boolean, result?: unknown, error?: string) => {
      if (profiling && ok && e.kind === "session.create") hop("session.created", { task: e.taskID, session: (result as any)?.id });
      if (e.reply && generation === this.generation) this.feed({ type: "effect.done", effectID: e.id, ok, result, error });
    };
    this.perform(e).then(
      (result) => done(true, result),
      (err) => done(false, undefined, err instanceof Error ? err.message : String(err)),
    );
  }

  private answer(e: Effect): Promise<void> | undefined {
    if (profiling) hop("core.accepted", { call: e.callID, task: e.metadata?.taskId as string | undefined });
    const call = this.calls.get(e.callID!);
    if (!call) return;
    this.calls.delete(e.callID!);
    if (e.error) {
      call.ctx.onAnswer?.({ error: e.error });
      return void call.reject(new Error(e.error));
    }
    // The title goes in the returned value: OpenCode 1.18 ignores ctx.metadata() for plugin tools.
    const title = typeof e.metadata?.title === "string" ? (e.metadata.title as string) : undefined;
    const answer = { title, output: e.output ?? "", metadata: e.metadata };
    call.ctx.onAnswer?.({ answer });
    call.resolve(answer);
    const returned = call.ctx.returned ?? new Promise<void>((r) => setTimeout(r, 0));
    return Promise.race([returned, new Promise<void>((r) => (setTimeout(r, RETURN_WAIT_MS) as any).unref?.())]);
  }

  // A state file that cannot be written (a full disk) is logged; the tasks go on.
  private guard(what: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log("error", `asyncagents: ${what} failed: ${(err as Error).message}`);
    }
  }

  private guardRead<T extends string | Uint8Array>(what: string, fn: () => T): T | "" {
    try {
      return fn();
    } catch (err) {
      this.log("error", `asyncagents: ${what} failed: ${(err as Error).message}`);
      return "";
    }
  }

  private clearTimer(id: string): void {
    const t = this.timers.get(id);
    if (t !== undefined) clearTimeout(t);
    this.timers.delete(id);
  }

  /**
   * Stops every timer, arms no new one, and refuses the tool calls still waiting: called when OpenCode disposes the plugin (in
   * OpenCode's thread; a Worker ends instead). Effects in flight finish, and their results are
   * still recorded.
   */
  dispose(): void {
    this.disposed = true;
    this.histories.stop();
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    for (const call of this.calls.values()) call.reject(new Error("asyncagents is unavailable: the plugin was unloaded by OpenCode"));
    this.calls.clear();
  }
}
