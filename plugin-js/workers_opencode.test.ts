// The worker's side on the real `opencode serve` (the pinned opencode-ai, password set, its own
// HOME, a temporary git clone): pins what OpenCode 1.18.33 does that the executor relies on
// (CONTRACT36 "Changes", 03:47). Health and its 401; the worker's stream up and its events tagged;
// a worktree that is not ready at the POST's answer, under the worker's data dir, from the clone's
// HEAD; GET /vcs/diff/raw leaving binary files out (why the diff goes through a session's shell);
// the diff through that shell with a child's commit, new, deleted and binary files, imported
// locally byte for byte; the throwaway session gone; the worktree and its branch removed.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CoreEvent } from "../bridge/types";
import { until } from "./fake_worker";
import { request } from "./workers_client";
import { performOnWorker, type WorkerEffect } from "./workers_effects";
import { WorkerFollowers } from "./workers_follow";
import { IMPORT_EFFECTS } from "./worktree_import";

const BIN = join(import.meta.dir, "..", "node_modules", ".bin", "opencode");
const PW = "worker-pw-0123";
const ENV = "AA_TEST_REAL_W1_PASSWORD";
let root = "";
let clone = "";
let parent = "";
let proc: ReturnType<typeof Bun.spawn> | undefined;
let url = "";
const fed: CoreEvent[] = [];
const followers = new WorkerFollowers((e) => void fed.push(e));
const remote = () => ({ url, username: "opencode", passwordEnv: ENV });
const on = (e: Partial<WorkerEffect>) => performOnWorker({ id: 1, worker: "w1", remote: remote(), ...e } as WorkerEffect, followers);

function git(cwd: string, ...args: string[]): string {
  const r = spawnSync("git", args, { cwd, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
  return r.stdout.trim();
}

async function freePort(): Promise<number> {
  const s = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "aa-worker-real-"));
  const home = join(root, "home");
  mkdirSync(home);
  // The parent's repository, and the worker's clone of it (its own HOME, as a worker machine).
  parent = join(root, "parent");
  mkdirSync(parent);
  git(parent, "init", "-q", "-b", "main");
  git(parent, "config", "user.name", "User");
  git(parent, "config", "user.email", "user@example.com");
  writeFileSync(join(parent, "a.txt"), "one\ntwo\n");
  writeFileSync(join(parent, "gone.txt"), "bye\n");
  git(parent, "add", "-A");
  git(parent, "commit", "-q", "-m", "first");
  clone = join(root, "clone");
  git(root, "clone", "-q", parent, clone);
  git(clone, "config", "user.name", "Worker");
  git(clone, "config", "user.email", "worker@example.com");
  process.env[ENV] = PW;
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  const xdg = (k: string) => join(home, k);
  // An agent only the worker has, in its own (global) config.
  mkdirSync(join(xdg("config"), "opencode"), { recursive: true });
  writeFileSync(join(xdg("config"), "opencode", "opencode.json"), JSON.stringify({ agent: { "remote-only": { mode: "subagent", description: "Only on this worker" } } }));
  proc = Bun.spawn([BIN, "serve", "--hostname", "127.0.0.1", "--port", String(port)], {
    cwd: clone,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: home,
      XDG_CONFIG_HOME: xdg("config"),
      XDG_DATA_HOME: xdg("data"),
      XDG_CACHE_HOME: xdg("cache"),
      XDG_STATE_HOME: xdg("state"),
      OPENCODE_SERVER_PASSWORD: PW,
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      OPENCODE_DISABLE_SHARE: "1",
      OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
      OPENCODE_DISABLE_CLAUDE_CODE: "1",
      GIT_CONFIG_NOSYSTEM: "1",
    },
    stdout: "ignore",
    stderr: "ignore",
  });
  const end = performance.now() + 60_000;
  for (;;) {
    const ok = await on({ kind: "worker.health" }).then(() => true, () => false);
    if (ok) break;
    if (performance.now() > end || proc.exitCode !== null) throw new Error("opencode serve did not answer /global/health within 60 s");
    await Bun.sleep(200);
  }
}, 90_000);

afterAll(async () => {
  followers.stop();
  if (proc && proc.exitCode === null) {
    proc.kill("SIGTERM");
    const ended = await Promise.race([proc.exited.then(() => true), Bun.sleep(5_000).then(() => false)]);
    if (!ended) proc.kill("SIGKILL");
  }
  delete process.env[ENV];
  rmSync(root, { recursive: true, force: true });
});

test("health answers {healthy, version, date}; a wrong password is '401', named as such", async () => {
  const asked = Date.now();
  const h = (await on({ kind: "worker.health" })) as { healthy: boolean; version: string; date: number };
  expect({ healthy: h.healthy, version: h.version }).toEqual({ healthy: true, version: "1.18.33" });
  // OpenCode's answer has a Date header: this worker's clock is ours, to the second; the header
  // may be the one its server made the second before (seen once), which the core allows for.
  expect(h.date).toBeGreaterThanOrEqual(Math.floor(asked / 1000) * 1000 - 1000);
  expect(h.date).toBeLessThanOrEqual(Date.now());
  process.env[ENV] = "not-the-password";
  try {
    const err = await on({ kind: "worker.health" }).then(() => "", (e: Error) => e.message);
    expect(err).toBe("wrong username or password (401)");
    const s = await on({ kind: "session.status", directory: clone }).then(() => "", (e: Error) => e.message);
    expect(s).toBe("worker w1: reading session status: wrong username or password (401)");
  } finally {
    process.env[ENV] = PW;
  }
}, 30_000);

test("the worker's stream comes up and feeds its events tagged with the worker", async () => {
  followers.follow("w1", remote());
  await until("the stream up", () => fed.some((e) => e.type === "worker.state" && e.up), 30_000);
  const { id } = (await on({ kind: "session.create", directory: clone, title: "pinned" })) as { id: string };
  expect(id).toStartWith("ses_");
  await until("its session.created", () => fed.some((e: any) => e.type === "opencode" && e.event.type === "session.created" && e.event.properties?.info?.id === id), 30_000);
  const ev = fed.find((e: any) => e.type === "opencode" && e.event.type === "session.created") as any;
  expect(ev.worker).toBe("w1");
  expect(fed.some((e: any) => e.type === "opencode" && ["server.connected", "server.heartbeat", "sync"].includes(e.event.type))).toBe(false);
  await on({ kind: "session.delete", directory: clone, sessionID: id });
}, 60_000);

test("the worker lists its own agents in its directory: one only it has, with its mode", async () => {
  const agents = (await on({ kind: "agents.list", directory: clone })) as { name: string; mode: string; description?: string }[];
  expect(agents.find((a) => a.name === "remote-only")).toMatchObject({ mode: "subagent", description: "Only on this worker" });
  expect(agents.map((a) => a.name)).toContain("general");
});

test("a worktree made, changed as a child would, diffed with its binary files, imported home byte for byte, and removed", async () => {
  const head = git(clone, "rev-parse", "HEAD");
  const made = (await on({ kind: "worker.worktree.create", directory: clone, taskID: "tsk_Real1" })) as { directory: string; branch: string };
  // The name is slugged, the branch is OpenCode's, the folder is under the worker's data dir.
  expect(made.branch).toBe("opencode/tsk-real1");
  expect(made.directory).toStartWith(join(root, "home", "data", "opencode", "worktree"));
  expect(made.directory.endsWith("/tsk-real1")).toBe(true);
  // Replied after worktree.ready: its files are there, from the clone's HEAD.
  expect(readdirSync(made.directory).sort()).toEqual([".git", "a.txt", "gone.txt"]);
  expect(git(made.directory, "rev-parse", "HEAD")).toBe(head);

  // The child: one commit of its own, then new, deleted and binary files left uncommitted.
  const wt = made.directory;
  writeFileSync(join(wt, "a.txt"), "one\nTWO\n");
  git(wt, "commit", "-q", "-am", "child's commit");
  writeFileSync(join(wt, "new.txt"), "fresh\n");
  unlinkSync(join(wt, "gone.txt"));
  const bin = Buffer.from([0, 255, 1, 254, 0, 10]);
  writeFileSync(join(wt, "pic.bin"), bin);

  // GET /vcs/diff/raw has the new text file but no applicable binary patch.
  const raw = await (await request(remote(), "vcs/diff/raw", { directory: wt, timeoutMs: 30_000 })).text();
  expect(raw).toContain("+++ b/new.txt");
  expect(raw).toContain("Binary files /dev/null and b/pic.bin differ");
  expect(raw).not.toContain("GIT binary patch");

  const { patch } = (await on({ kind: "worker.worktree.diff", directory: wt })) as { patch: string };
  expect(patch).toContain("GIT binary patch");
  const sessions = (await (await request(remote(), "session", { directory: wt, timeoutMs: 30_000 })).json()) as { title: string }[];
  expect(sessions.filter((s) => s.title.startsWith("asyncagents"))).toEqual([]);

  const before = readIndex(parent);
  const r = (await IMPORT_EFFECTS["worktree.import"]({ kind: "worktree.import", directory: parent, branch: "asyncagents/tsk_Real1", content: patch })) as any;
  expect(readIndex(parent)).toBe(before);
  expect(git(parent, "show", `${r.commit}:a.txt`)).toBe("one\nTWO");
  expect(git(parent, "show", `${r.commit}:new.txt`)).toBe("fresh");
  expect(git(parent, "ls-tree", "--name-only", r.commit).split("\n").sort()).toEqual(["a.txt", "new.txt", "pic.bin"]);
  expect(Buffer.from(spawnSync("git", ["show", `${r.commit}:pic.bin`], { cwd: parent }).stdout).equals(bin)).toBe(true);

  // OpenCode's list of the clone's worktrees names it (a restart looks there for what a stop left).
  expect(((await on({ kind: "worker.worktree.list", directory: clone })) as { directories: string[] }).directories).toContain(wt);
  expect(await on({ kind: "worker.worktree.remove", directory: clone, path: wt })).toBeNull();
  expect(existsSync(wt)).toBe(false);
  expect(((await on({ kind: "worker.worktree.list", directory: clone })) as { directories: string[] }).directories).not.toContain(wt);
  expect(git(clone, "branch", "--list", "opencode/tsk-real1")).toBe("");
}, 120_000);

/** The user's index file, byte for byte. */
function readIndex(dir: string): string {
  return readFileSync(join(dir, ".git", "index")).toString("base64");
}
