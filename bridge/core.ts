// Loads the core .wasm (built from ../wasm) in Bun or Node and offers typed calls over its JSON
// envelope. The plugin and the bun tests use this; ../host is the Go twin.

import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { makeWasi } from "./wasi";
import { ABI_VERSION, type ConfigFile, type CoreConfig, type CoreEvent, type CoreResponse, type Effect, type Task, type Trap } from "./types";

export * from "./types";

interface Exports {
  memory: WebAssembly.Memory;
  _initialize: () => void;
  aa_abi_version: () => number;
  aa_alloc: (size: number) => number;
  aa_free: (ptr: number) => void;
  aa_call: (ptr: number, len: number) => bigint;
}

export class CoreError extends Error {}

/**
 * The instance itself failed (a WebAssembly trap, or the Go runtime's exit after a panic it could
 * not recover): it is unusable, and every later call on it throws this too. The host makes a new
 * one (ABI.md, "Traps").
 */
export class CoreTrap extends Error {}

const NUL = new Uint8Array([0]);

/** One instance of the core. Calls are synchronous: the guest never waits on anything. */
export class Core {
  private readonly encoder = new TextEncoder();
  private readonly decoder = new TextDecoder();

  private trap?: CoreTrap;

  private constructor(private readonly ex: Exports) {}

  /** Instantiates a compiled module, runs _initialize and checks the ABI version. */
  static async instantiate(module: WebAssembly.Module, write?: (fd: number, text: string) => void): Promise<Core> {
    let memory: WebAssembly.Memory | undefined;
    const wasi = makeWasi(() => memory!, { write });
    const instance = await WebAssembly.instantiate(module, { wasi_snapshot_preview1: wasi });
    memory = (instance.exports as unknown as Exports).memory;
    return Core.started(instance);
  }

  /** instantiate, at once: a host replacing an instance that trapped does it within the call. */
  static instantiateSync(module: WebAssembly.Module, write?: (fd: number, text: string) => void): Core {
    let memory: WebAssembly.Memory | undefined;
    const wasi = makeWasi(() => memory!, { write });
    const instance = new WebAssembly.Instance(module, { wasi_snapshot_preview1: wasi });
    memory = (instance.exports as unknown as Exports).memory;
    return Core.started(instance);
  }

  private static started(instance: WebAssembly.Instance): Core {
    const ex = instance.exports as unknown as Exports;
    ex._initialize();
    const abi = ex.aa_abi_version();
    if (abi !== ABI_VERSION) {
      throw new CoreError(`asyncagents: the core module speaks ABI ${abi}, this bridge speaks ABI ${ABI_VERSION}; rebuild both from one checkout`);
    }
    return new Core(ex);
  }

  /** The size of the instance's linear memory: at most what the core held at once. */
  memoryBytes(): number {
    return this.ex.memory.buffer.byteLength;
  }

  /** Sends one raw envelope and returns the raw response. */
  callRaw(request: string): string {
    return this.callParts([this.encoder.encode(request)]);
  }

  /** Sends an envelope made of parts (copied one after another into the guest's memory). */
  private callParts(parts: Uint8Array[]): string {
    const size = parts.reduce((n, p) => n + p.length, 0);
    return this.callFilled(size, (into) => {
      let at = 0;
      for (const p of parts) {
        into.set(p, at);
        at += p.length;
      }
      return at;
    });
  }

  /**
   * Sends an envelope of at most size bytes, which fill writes straight into the guest's memory
   * and whose length it returns.
   */
  private callFilled(size: number, fill: (into: Uint8Array) => number): string {
    if (this.trap) throw this.trap;
    const ex = this.ex;
    const inPtr = this.guest("aa_alloc", () => ex.aa_alloc(size));
    let used: number;
    try {
      used = fill(new Uint8Array(ex.memory.buffer, inPtr, size));
    } catch (err) {
      this.guest("aa_free", () => ex.aa_free(inPtr));
      throw err;
    }
    return this.guest("aa_call", () => {
      // i64 arrives signed: read it unsigned, or a response past 2 GiB would have a negative address.
      const packed = BigInt.asUintN(64, ex.aa_call(inPtr, used));
      const outPtr = Number(packed >> 32n);
      const outLen = Number(packed & 0xffffffffn);
      // Read before freeing; the memory buffer may have grown during the call, so view it anew.
      const text = this.decoder.decode(new Uint8Array(ex.memory.buffer, outPtr, outLen));
      ex.aa_free(inPtr);
      ex.aa_free(outPtr);
      return text;
    });
  }

  /** Runs fn, which enters the guest: anything it throws is the instance failing (CoreTrap). */
  private guest<T>(what: string, fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      this.trap = new CoreTrap(`core trap: ${what}: ${err instanceof Error ? err.message : String(err)}`);
      throw this.trap;
    }
  }

  /**
   * call for a restore whose history (and index) are files: they are read straight into the
   * guest's memory, with no copy of them made here (11 MB with 10,000 tasks: reading it into a
   * buffer, then copying that, cost twice the page faults).
   */
  callWithFiles(request: Record<string, unknown>, files: { history: string; index?: string }): CoreResponse {
    // A missing file is empty. The index is a cache: unreadable, it is none; the history
    // unreadable is an error, as reading it any other way.
    const open = (path: string | undefined, cache: boolean): { fd: number; size: number } | undefined => {
      if (!path) return undefined;
      try {
        const fd = openSync(path, "r");
        return { fd, size: fstatSync(fd).size };
      } catch (err) {
        if (cache || (err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
        throw err;
      }
    };
    const index = open(files.index, true);
    let history: { fd: number; size: number } | undefined;
    try {
      history = open(files.history, false);
    } catch (err) {
      if (index) closeSync(index.fd);
      throw err;
    }
    try {
      const indexLen = index?.size ?? 0;
      const historyLen = history?.size ?? 0;
      const env = this.encoder.encode(JSON.stringify(indexLen > 0 ? { ...request, indexLen } : request));
      if (indexLen + historyLen === 0) return this.check(this.callParts([env]));
      const raw = this.callFilled(env.length + 1 + indexLen + historyLen, (into) => {
        into.set(env, 0);
        into[env.length] = 0;
        let at = env.length + 1;
        const readAll = (f: { fd: number; size: number } | undefined): number => {
          let got = 0;
          while (f && got < f.size) {
            const n = readSync(f.fd, into, at + got, f.size - got, got);
            if (n === 0) break; // the file shrank since its size was read
            got += n;
          }
          return got;
        };
        // The index must be whole (indexLen is in the envelope): one that fails to read, or
        // reads short, is sent as zeros, which the core takes for no index, as it does one that
        // cannot be opened. The history, last, may be read short if it shrank, and is then sent
        // as read.
        let gotIndex = -1;
        try {
          gotIndex = readAll(index);
        } catch {
          // an unreadable cache: the restore reads the whole history
        }
        if (gotIndex !== indexLen) into.fill(0, at, at + indexLen);
        at += indexLen;
        return at + readAll(history);
      });
      return this.check(raw);
    } finally {
      if (index) closeSync(index.fd);
      if (history) closeSync(history.fd);
    }
  }

  /**
   * Sends one envelope; throws CoreError with the core's own words when it answers ok: false.
   * A history may be given as text or as the file's bytes: bytes go into the guest as they are,
   * with no decoding to text and encoding back (10 MB of history with 10,000 tasks).
   */
  call(request: Record<string, unknown>): CoreResponse {
    // The history travels raw after a NUL byte, not escaped inside the JSON, and its index
    // (restore only) just before it, indexLen bytes long (ABI.md).
    const { history, index, ...rest } = request;
    const bytes = (v: unknown): Uint8Array =>
      v instanceof Uint8Array ? v : typeof v === "string" && v !== "" ? this.encoder.encode(v) : new Uint8Array(0);
    let raw: string;
    const indexBytes = bytes(index);
    if (indexBytes.length > 0) {
      const env = this.encoder.encode(JSON.stringify({ ...rest, indexLen: indexBytes.length }));
      raw = this.callParts([env, NUL, indexBytes, bytes(history)]);
    } else if (history instanceof Uint8Array && history.length > 0) {
      raw = this.callParts([this.encoder.encode(JSON.stringify(rest)), NUL, history]);
    } else if (typeof history === "string" && history !== "") {
      raw = this.callRaw(JSON.stringify(rest) + "\u0000" + history);
    } else {
      raw = this.callRaw(JSON.stringify(rest));
    }
    return this.check(raw);
  }

  /** Reads a response; throws CoreError with the core's own words when it says ok: false. */
  private check(raw: string): CoreResponse {
    const res = parseResponse(raw);
    if (!res.ok) throw new CoreError(res.error ?? "core error");
    return res;
  }

  /**
   * Starts the machine on config, with the config files the storage op named layered over it. The
   * seed (random, per process) keeps the task IDs this core mints apart from another process's.
   */
  init(config: CoreConfig = {}, configFiles: ConfigFile[] = [], traps: Trap[] = [], historySync = false, options?: unknown, env?: unknown): CoreResponse {
    const seed = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
    const req: Record<string, unknown> = { op: "init", config, seed };
    // A host that writes the history to a file answers history.sync (core/storage_fault.go).
    if (historySync) req.historySync = true;
    if (configFiles.length) req.configFiles = configFiles;
    // The plugin options of opencode.json as the user wrote them: the core checks them as a file.
    if (options !== undefined) req.options = options;
    // Where the project is (the storage op's env): the core places isolated tasks' worktrees by it.
    if (env !== undefined) req.env = env;
    // An instance made after a trap: the core answers what it means (recovery).
    if (traps.length) req.traps = traps;
    return this.call(req);
  }

  step(now: number, event: CoreEvent): Effect[] {
    return this.call({ op: "step", now, event }).effects ?? [];
  }

  tasks(): Task[] {
    return this.call({ op: "tasks" }).tasks ?? [];
  }
}

/**
 * Reads a response envelope as the core sends it: the JSON envelope and, after a NUL byte, the
 * raw body of an http op's answer (ABI.md).
 */
export function parseResponse(raw: string): CoreResponse {
  const nul = raw.indexOf("\u0000");
  if (nul < 0) return JSON.parse(raw) as CoreResponse;
  const res = JSON.parse(raw.slice(0, nul)) as CoreResponse & { http?: { body?: string } };
  if (res.http) res.http.body = raw.slice(nul + 1);
  return res;
}

/** Compiles module bytes. Kept apart from instantiation so a plugin can start it without waiting. */
export function compile(bytes: BufferSource): Promise<WebAssembly.Module> {
  return WebAssembly.compile(bytes);
}
