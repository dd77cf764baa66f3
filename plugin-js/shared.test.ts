// The core a project's plugin instances share (shared.ts): started once, fed each event once,
// stopped when the last instance leaves.
import { expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CoreEvent } from "../bridge/core";
import type { CoreHost } from "./remote";
import { coreFor, leaveCore, ownWorktree, REMEMBERED_EVENTS, SharedCore } from "./shared";
import type { TmuxPanes } from "./tmux";

function fakeHost() {
  const fed: CoreEvent[] = [];
  const host: CoreHost = {
    callTool: async () => ({ output: "" }),
    feed: (ev) => void fed.push(ev),
    dispose: async () => {},
  };
  return { host, fed };
}

const idle = (id?: string): CoreEvent => ({ type: "opencode", event: { type: "session.idle", properties: { sessionID: "ses_a" }, ...(id ? { id } : {}) } as any });

test("a second instance of a project shares the first one's core; the last to leave stops it", () => {
  let started = 0;
  const start = () => (started++, new SharedCore(fakeHost().host, {} as TmuxPanes));
  const a = coreFor("/p/shared-1", start);
  const b = coreFor("/p/shared-1", start);
  const other = coreFor("/p/shared-2", start);
  expect(started).toBe(2);
  expect([a.first, b.first, other.first]).toEqual([true, false, true]);
  expect(b.shared).toBe(a.shared);
  expect(other.shared).not.toBe(a.shared);

  expect(leaveCore("/p/shared-1", a.shared, a.user)).toBe(false);
  expect(leaveCore("/p/shared-1", b.shared, b.user)).toBe(true);
  // A later instance (OpenCode reloaded the project) starts a core of its own.
  const c = coreFor("/p/shared-1", start);
  expect(c.first).toBe(true);
  expect(started).toBe(3);
  leaveCore("/p/shared-1", c.shared, c.user);
  leaveCore("/p/shared-2", other.shared, other.user);
});

test("a project reached through a symlink or another spelling shares the one core", () => {
  const dir = mkdtempSync(join(tmpdir(), "asyncagents-shared-"));
  try {
    const real = join(dir, "project");
    mkdirSync(real);
    symlinkSync(real, join(dir, "link"));
    let started = 0;
    const start = () => (started++, new SharedCore(fakeHost().host, {} as TmuxPanes));
    const a = coreFor(real, start);
    const b = coreFor(join(dir, "link"), start);
    const c = coreFor(join(dir, "link", "..", "project") + "/", start);
    expect(started).toBe(1);
    expect([b.shared, c.shared]).toEqual([a.shared, a.shared]);
    expect(leaveCore(join(dir, "link"), b.shared, b.user)).toBe(false);
    expect(leaveCore(real + "/.", c.shared, c.user)).toBe(false);
    expect(leaveCore(real, a.shared, a.user)).toBe(true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("an event both instances hear is fed once, by its ID", () => {
  const { host, fed } = fakeHost();
  const shared = new SharedCore(host, {} as TmuxPanes);
  const a = shared.join();
  const b = shared.join();
  shared.feed(b, idle("evt_1"));
  shared.feed(a, idle("evt_1"));
  shared.feed(a, idle("evt_2"));
  shared.feed(b, idle("evt_2"));
  expect(fed.map((e) => (e as any).event.id)).toEqual(["evt_1", "evt_2"]);
  // Other inputs are not OpenCode's events: they pass.
  shared.feed(b, { type: "start" });
  expect(fed).toHaveLength(3);
});

test("an event without an ID is fed by the oldest instance only, and by the next once it leaves", () => {
  const { host, fed } = fakeHost();
  const shared = new SharedCore(host, {} as TmuxPanes);
  const a = shared.join();
  const b = shared.join();
  shared.feed(b, idle());
  shared.feed(a, idle());
  expect(fed).toHaveLength(1);
  shared.leave(a);
  shared.feed(b, idle());
  expect(fed).toHaveLength(2);
});

test("the IDs remembered are bounded; the newest are kept", () => {
  const { host, fed } = fakeHost();
  const shared = new SharedCore(host, {} as TmuxPanes);
  const a = shared.join();
  for (let i = 0; i < 5000; i++) shared.feed(a, idle(`evt_${i}`));
  shared.feed(a, idle("evt_4999"));
  expect(fed).toHaveLength(5000); // the newest is remembered: not fed twice
  shared.feed(a, idle(`evt_${5000 - REMEMBERED_EVENTS}`)); // the oldest still within the bound
  expect(fed).toHaveLength(5000);
  shared.feed(a, idle(`evt_${4999 - REMEMBERED_EVENTS}`)); // just past it: forgotten, fed again
  expect(fed).toHaveLength(5001);
});

test("an isolated task's worktree instance joins its project's core, before and after the project's own instance leaves", () => {
  let started = 0;
  const start = () => (started++, new SharedCore(fakeHost().host, {} as TmuxPanes));
  const project = coreFor("/p/owner-1", start);
  ownWorktree("/data/worktrees/k/bg_1", "/p/owner-1");
  const wt = coreFor("/data/worktrees/k/bg_1", start);
  expect(started).toBe(1);
  expect(wt.first).toBe(false);
  expect(wt.shared).toBe(project.shared);
  expect(leaveCore("/p/owner-1", project.shared, project.user)).toBe(false);
  expect(leaveCore("/data/worktrees/k/bg_1", wt.shared, wt.user)).toBe(true);
  // The project's next instance starts a fresh core: the stopped one is no longer kept.
  expect(coreFor("/p/owner-1", start).first).toBe(true);
  expect(started).toBe(2);
});
