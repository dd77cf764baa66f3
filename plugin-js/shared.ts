// One core per project in a thread. OpenCode 1.18 can run two instances of the same project at
// once, and each loads the plugin: its TUI starts two at every launch (two requests race to
// create the project's instance), and both stay until it quits. Two cores would mean two Workers,
// two status API servers (5165 and 5166, server.json naming whichever bound last) and two writers
// of one history. So the plugin instances of a project share the first one's core, its server and
// its panes (and the options the first was given: instances of one project read the same
// opencode.json); the last one disposed stops them.
//
// Either instance may hear the project's events, and both might hear one: an event is fed once,
// by its ID, whichever instance hears it first. (Seen in 1.18.33's TUI, with a spy plugin beside
// this one: every event the core subscribes to carried an ID, and only the first instance heard
// any: 56 for one task's launch, run and notice.)

import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import type { CoreEvent } from "../bridge/core";
import type { CoreHost } from "./remote";
import type { TmuxPanes } from "./tmux";

/** How many event IDs are remembered: far more than arrive between two instances' deliveries. */
export const REMEMBERED_EVENTS = 2048;

/** A project's core, and what shares it. */
export class SharedCore {
  private readonly users: symbol[] = [];
  private readonly seen = new Set<string>();

  constructor(
    readonly host: CoreHost,
    readonly panes: TmuxPanes,
  ) {}

  /**
   * Feeds an event heard by user, unless the core has had it already. An event without an ID
   * cannot be told from its twin: only the oldest user feeds those.
   */
  feed(user: symbol, ev: CoreEvent): void {
    if (ev.type !== "opencode" || !("event" in ev)) return this.host.feed(ev);
    const id = (ev.event as { id?: unknown }).id;
    if (typeof id === "string" && id !== "") {
      if (this.seen.has(id)) return;
      this.seen.add(id);
      if (this.seen.size > REMEMBERED_EVENTS) this.seen.delete(this.seen.values().next().value!);
    } else if (this.users[0] !== user) {
      return;
    }
    this.host.feed(ev);
  }

  join(): symbol {
    const user = Symbol("plugin instance");
    this.users.push(user);
    return user;
  }

  /** Removes user; true when it was the last, and the core must stop. */
  leave(user: symbol): boolean {
    const i = this.users.indexOf(user);
    if (i >= 0) this.users.splice(i, 1);
    return this.users.length === 0;
  }
}

/**
 * The project's absolute path with its symlinks resolved, as the CLI resolves --project
 * (host/cmd/asyncagents/project.go): the core names the project's files after it, so a project
 * reached through a symlink or another spelling has one history and one folder of server files,
 * and the cores below are kept by it too, or two cores would write one log.
 */
export function projectPath(directory: string): string {
  try {
    return realpathSync(resolve(directory));
  } catch {
    return resolve(directory);
  }
}

/** The cores, by project path (projectPath). */
const byDirectory = new Map<string, SharedCore>();

/**
 * The owning project of each isolated task's worktree, by worktree path. OpenCode starts an
 * instance for a worktree the first time a request names it (?directory=), and loads this plugin
 * there too (TestWorktreeInstance): that instance must join its project's core, never start a
 * core, history and status API of its own; and only its event hook hears the child's events.
 * The executor records a worktree before any request names it (ownWorktree), so the instance
 * finds its project here, after a restart too.
 */
const worktreeOwners = new Map<string, string>();

/** Records that path is a worktree of project's tasks. */
export function ownWorktree(path: string, project: string): void {
  worktreeOwners.set(projectPath(path), projectPath(project));
}

/** The project a directory's core belongs to: its owner for a worktree, else itself. */
function coreKey(directory: string): string {
  const path = projectPath(directory);
  return worktreeOwners.get(path) ?? path;
}

/** The stop of a directory's last core, under way: a new core starts once it is done. */
const stopping = new Map<string, Promise<void>>();

/**
 * Records that directory's core is stopping (its last instance was disposed). A reload's next
 * instance waits for it (whenStopped), so that two cores never work on one history at once.
 */
export function stoppingCore(directory: string, stop: Promise<unknown>): Promise<void> {
  directory = coreKey(directory);
  const done: Promise<void> = stop.then(
    () => {},
    () => {},
  ).finally(() => {
    if (stopping.get(directory) === done) stopping.delete(directory);
  });
  stopping.set(directory, done);
  return done;
}

/** Resolves once no core of directory is stopping. */
export function whenStopped(directory: string): Promise<void> {
  directory = coreKey(directory);
  return stopping.get(directory) ?? Promise.resolve();
}

/**
 * The core of the project in directory, started by start if no plugin instance of this thread
 * runs one; first says it was started now.
 */
export function coreFor(directory: string, start: () => SharedCore): { shared: SharedCore; user: symbol; first: boolean } {
  directory = coreKey(directory);
  let shared = byDirectory.get(directory);
  const first = !shared;
  if (!shared) {
    shared = start();
    byDirectory.set(directory, shared);
  }
  return { shared, user: shared.join(), first };
}

/** Removes user from directory's core; true when it was the last, and the core must stop. */
export function leaveCore(directory: string, shared: SharedCore, user: symbol): boolean {
  directory = coreKey(directory);
  if (!shared.leave(user)) return false;
  if (byDirectory.get(directory) === shared) byDirectory.delete(directory);
  return true;
}
