// The views the terminal UI shows, kept fresh: one section per session on screen (the sidebar
// and the prompt's count share it), read again when the event stream says a task changed, and
// each VIEW_LIVE_REFRESH_MS while one of them is live (its elapsed times move). No timer runs
// while nothing is on screen or nothing runs.

import { createSignal, type Accessor, type Setter } from "opentui:runtime-module:solid-js";
import { VIEW_LIVE_REFRESH_MS, VIEW_NO_SERVER_AFTER_MS, type ViewSection } from "../../bridge/types";
import { findServer, ViewClient } from "./source";

interface Watched {
  count: number;
  get: Accessor<ViewSection | undefined>;
  set: Setter<ViewSection | undefined>;
}

/** How long the module waits before looking again for the server file or the event stream. */
const RETRY_MS = 1000;
/** Changes that come together are read once. */
const SETTLE_MS = 50;

export class Views {
  private readonly watched = new Map<string, Watched>();
  private readonly listeners = new Set<() => void>();
  private client?: ViewClient;
  private tick?: ReturnType<typeof setInterval>;
  private pending?: ReturnType<typeof setTimeout>;
  private live = false;
  /** True once no server file appeared for VIEW_NO_SERVER_AFTER_MS: the server part is not loaded. */
  readonly noServer: Accessor<boolean>;
  private readonly setNoServer: Setter<boolean>;

  constructor(
    private readonly signal: AbortSignal,
    private readonly log: (message: string) => void,
  ) {
    [this.noServer, this.setNoServer] = createSignal(false);
    void this.connect();
  }

  /** The server's client, once its file was found. */
  get api(): ViewClient | undefined {
    return this.client;
  }

  /** Finds the server file, then follows the event stream; again whenever the stream ends. */
  private async connect(): Promise<void> {
    const since = Date.now();
    while (!this.signal.aborted) {
      const server = findServer(process.env, process.pid);
      this.setNoServer(!server && Date.now() - since >= VIEW_NO_SERVER_AFTER_MS);
      if (server) {
        this.client = new ViewClient(server);
        this.changed();
        try {
          await this.client.follow(() => this.changed(), this.signal);
        } catch (err) {
          if (!this.signal.aborted) this.log(`asyncagents tui: the event stream ended: ${err}`);
        }
      }
      await new Promise((r) => setTimeout(r, RETRY_MS));
    }
    this.stopTick();
  }

  /** The section of sessionID, kept fresh until release() is called as often as watch(). */
  watch(sessionID: string): Accessor<ViewSection | undefined> {
    let w = this.watched.get(sessionID);
    if (!w) {
      const [get, set] = createSignal<ViewSection | undefined>(undefined);
      w = { count: 0, get, set };
      this.watched.set(sessionID, w);
      void this.read(sessionID, w);
    }
    w.count++;
    return w.get;
  }

  release(sessionID: string): void {
    const w = this.watched.get(sessionID);
    if (w && --w.count === 0) this.watched.delete(sessionID);
    this.retick();
  }

  /** Calls fn at each change and live tick, until the returned function is called. */
  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Sets whether a listener shows something live (the /tasks dialog). */
  setLive(live: boolean): void {
    this.live = live;
    this.retick();
  }

  private changed(): void {
    if (this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      this.refresh();
    }, SETTLE_MS);
  }

  private refresh(): void {
    for (const [id, w] of this.watched) void this.read(id, w);
    for (const fn of this.listeners) fn();
  }

  private async read(sessionID: string, w: Watched): Promise<void> {
    if (!this.client) return;
    try {
      w.set(await this.client.section(sessionID));
    } catch (err) {
      this.log(`asyncagents tui: reading the section of ${sessionID}: ${err}`);
    }
    this.retick();
  }

  /** Runs the live tick while something on screen is live, and only then. */
  private retick(): void {
    const live = this.live || [...this.watched.values()].some((w) => w.get()?.live);
    if (live && !this.tick && !this.signal.aborted) {
      this.tick = setInterval(() => this.refresh(), VIEW_LIVE_REFRESH_MS);
    } else if (!live) {
      this.stopTick();
    }
  }

  private stopTick(): void {
    clearInterval(this.tick);
    this.tick = undefined;
  }
}
