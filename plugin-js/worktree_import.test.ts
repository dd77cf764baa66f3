// A remote isolated task's changes on their way home, on real temporary repositories: the
// worker's side is a git worktree of a clone, diffed by the very shell command the plugin sends
// to the worker's OpenCode (DIFF_COMMAND), and worktree.import makes the branch in the parent's
// repository while the user's index, working tree and HEAD stay byte for byte as they were.

import { afterEach, beforeEach, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DIFF_COMMAND, patchFromOutput } from "./workers_worktree";
import { WORKTREE_EFFECTS } from "./worktree";
import { IMPORT_EFFECTS } from "./worktree_import";

let root = "";
let repo = "";
let clone = "";
let tree = "";
const savedEnv = { HOME: process.env.HOME, GIT_CONFIG_NOSYSTEM: process.env.GIT_CONFIG_NOSYSTEM };

function git(cwd: string, ...args: string[]): string {
  const r = spawnSync("git", args, { cwd, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
  return r.stdout.trim();
}

/** A file's bytes at a commit of repo, base64 (binary-safe). */
function blob(dir: string, rev: string, path: string): string {
  const r = spawnSync("git", ["show", `${rev}:${path}`], { cwd: dir });
  if (r.status !== 0) throw new Error(`git show ${rev}:${path}: ${r.stderr}`);
  return Buffer.from(r.stdout).toString("base64");
}

/** What the user's repository is: its index file's bytes, HEAD, status and branches. */
function userState(dir: string) {
  return {
    index: readFileSync(join(dir, ".git", "index")).toString("base64"),
    head: git(dir, "rev-parse", "HEAD"),
    status: git(dir, "status", "--porcelain", "--untracked-files=all"),
    branches: git(dir, "branch", "--format=%(refname:short)"),
  };
}

/** Runs the worker's diff command in dir, as OpenCode's shell would, and reads its patch. */
function workerDiff(dir: string): string {
  const r = spawnSync("bash", ["-c", DIFF_COMMAND], { cwd: dir, encoding: "utf8" });
  return patchFromOutput(`${r.stdout}${r.stderr}`);
}

const importPatch = (e: Record<string, unknown>) => IMPORT_EFFECTS["worktree.import"]({ kind: "worktree.import", ...e }) as Promise<any>;

const BINARY = Buffer.from([0, 1, 2, 255, 254, 0, 10, 13, 128]);
const LATIN1 = Buffer.from("caf\xe9 cr\xe8me\n", "latin1");

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "aa-import-"));
  process.env.HOME = root;
  process.env.GIT_CONFIG_NOSYSTEM = "1";
  repo = join(root, "project");
  mkdirSync(repo);
  git(repo, "init", "-q", "-b", "main");
  git(repo, "config", "user.name", "User");
  git(repo, "config", "user.email", "user@example.com");
  writeFileSync(join(repo, ".gitignore"), "secret.env\n");
  writeFileSync(join(repo, "a.txt"), "one\ntwo\nthree\n");
  writeFileSync(join(repo, "gone.txt"), "bye\n");
  writeFileSync(join(repo, "old.bin"), Buffer.from([0, 9, 8, 7]));
  git(repo, "add", "-A");
  git(repo, "commit", "-q", "-m", "first");
  // The worker: its own clone, and a worktree made as OpenCode makes one (a branch from HEAD).
  clone = join(root, "worker-clone");
  git(root, "clone", "-q", repo, clone);
  git(clone, "config", "user.name", "Worker");
  git(clone, "config", "user.email", "worker@example.com");
  tree = join(root, "worker-tree");
  git(clone, "worktree", "add", "-q", "-b", "opencode/tsk-1", tree);
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
  for (const [k, v] of Object.entries(savedEnv)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

test("a worker's changes (committed by the child or not, new, deleted, binary, non-UTF-8) arrive as the task's branch over HEAD; the user's index stays byte for byte", async () => {
  // The child commits one change itself and leaves the rest in the worktree.
  writeFileSync(join(tree, "a.txt"), "one\nTWO\nthree\n");
  git(tree, "commit", "-q", "-am", "child's own commit");
  writeFileSync(join(tree, "new.txt"), "fresh\n");
  writeFileSync(join(tree, "pic.bin"), BINARY);
  writeFileSync(join(tree, "old.bin"), Buffer.from([0, 9, 8, 7, 6, 255]));
  writeFileSync(join(tree, "latin1.txt"), LATIN1);
  writeFileSync(join(tree, "secret.env"), "ignored\n");
  unlinkSync(join(tree, "gone.txt"));
  const workerIndex = readFileSync(join(clone, ".git", "worktrees", "worker-tree", "index")).toString("base64");
  const patch = workerDiff(tree);
  // The worktree's own index is left alone by the diff.
  expect(readFileSync(join(clone, ".git", "worktrees", "worker-tree", "index")).toString("base64")).toBe(workerIndex);

  // The user meanwhile has a staged change and an unstaged one.
  writeFileSync(join(repo, "staged.txt"), "mine\n");
  git(repo, "add", "staged.txt");
  writeFileSync(join(repo, "a.txt"), "one\ntwo\nthree\nuser\n");
  const before = userState(repo);

  const r = await importPatch({ directory: repo, branch: "asyncagents/tsk_1", content: patch, message: "asyncagents: tsk_1", maxBytes: 0 });
  expect(userState(repo).index).toBe(before.index);
  expect(userState(repo)).toEqual({ ...before, branches: `asyncagents/tsk_1\n${before.branches}` });
  expect(r.base).toBe(before.head);
  expect(git(repo, "rev-parse", "asyncagents/tsk_1")).toBe(r.commit);
  expect(git(repo, "rev-parse", "asyncagents/tsk_1^")).toBe(before.head);
  expect(git(repo, "log", "-1", "--format=%s", r.commit)).toBe("asyncagents: tsk_1");
  expect(Buffer.from(blob(repo, r.commit, "a.txt"), "base64").toString()).toBe("one\nTWO\nthree\n");
  expect(blob(repo, r.commit, "pic.bin")).toBe(BINARY.toString("base64"));
  expect(blob(repo, r.commit, "old.bin")).toBe(Buffer.from([0, 9, 8, 7, 6, 255]).toString("base64"));
  expect(blob(repo, r.commit, "latin1.txt")).toBe(LATIN1.toString("base64"));
  expect(git(repo, "ls-tree", "--name-only", r.commit).split("\n").sort()).toEqual([".gitignore", "a.txt", "latin1.txt", "new.txt", "old.bin", "pic.bin"]);
  const files = Object.fromEntries((r.files as any[]).map((f) => [f.path, [f.added, f.removed]]));
  expect(files).toEqual({ "a.txt": [1, 1], "gone.txt": [0, 1], "latin1.txt": [1, 0], "new.txt": [1, 0], "old.bin": [-1, -1], "pic.bin": [-1, -1] });
  expect(r.diff).toContain("diff --git a/new.txt b/new.txt");
  expect(r.diffCut).toBeUndefined();
});

test("maxBytes cuts the reply's diff and says so", async () => {
  writeFileSync(join(tree, "big.txt"), "x\n".repeat(5000));
  const r = await importPatch({ directory: repo, branch: "asyncagents/tsk_2", content: workerDiff(tree), maxBytes: 100 });
  expect(r.diff.length).toBe(100);
  expect(r.diffCut).toBe(true);
  expect(blob(repo, r.commit, "big.txt")).toBe(Buffer.from("x\n".repeat(5000)).toString("base64"));
});

test("no changes: an empty patch, and nothing is created", async () => {
  const patch = workerDiff(tree);
  expect(patch).toBe("");
  const before = userState(repo);
  expect(await importPatch({ directory: repo, branch: "asyncagents/tsk_3", content: patch })).toEqual({ commit: "" });
  expect(userState(repo)).toEqual(before);
});

test("a patch that does not apply fails with git's words and changes nothing", async () => {
  writeFileSync(join(tree, "a.txt"), "one\nTWO\nthree\n");
  const patch = workerDiff(tree);
  // The parent's HEAD moved on: a.txt is no longer what the worker's clone started from.
  writeFileSync(join(repo, "a.txt"), "entirely\nother\n");
  git(repo, "commit", "-q", "-am", "the parent moved on");
  const before = userState(repo);
  await expect(importPatch({ directory: repo, branch: "asyncagents/tsk_4", content: patch })).rejects.toThrow(/a\.txt/);
  expect(userState(repo)).toEqual(before);
});

test("a patch over another base applies three-way when the lines it touches did not move", async () => {
  writeFileSync(join(tree, "a.txt"), "one\ntwo\nthree!\n");
  const patch = workerDiff(tree);
  writeFileSync(join(repo, "a.txt"), "zero\none\ntwo\nthree\n");
  git(repo, "commit", "-q", "-am", "the parent moved on");
  const r = await importPatch({ directory: repo, branch: "asyncagents/tsk_5", content: patch });
  expect(Buffer.from(blob(repo, r.commit, "a.txt"), "base64").toString()).toBe("zero\none\ntwo\nthree!\n");
});

test("a branch that exists already is refused, naming it", async () => {
  writeFileSync(join(tree, "new.txt"), "fresh\n");
  git(repo, "branch", "asyncagents/tsk_6");
  const before = userState(repo);
  await expect(importPatch({ directory: repo, branch: "asyncagents/tsk_6", content: workerDiff(tree) })).rejects.toThrow("branch asyncagents/tsk_6 already exists");
  expect(userState(repo)).toEqual(before);
});

test("an import asked again after it was made (a stop before the core heard) answers as it did", async () => {
  writeFileSync(join(tree, "new.txt"), "fresh\n");
  const patch = workerDiff(tree);
  const first = await importPatch({ directory: repo, branch: "asyncagents/tsk_8", content: patch, message: "asyncagents: tsk_8" });
  // The user's HEAD moved on meanwhile: the branch stays on the commit it was made over.
  writeFileSync(join(repo, "a.txt"), "moved\n");
  git(repo, "commit", "-q", "-am", "the parent moved on");
  const before = userState(repo);
  const again = await importPatch({ directory: repo, branch: "asyncagents/tsk_8", content: patch, message: "asyncagents: tsk_8" });
  expect(again).toEqual(first);
  expect(userState(repo)).toEqual(before);
  // Another patch on that branch is not this import: refused.
  writeFileSync(join(tree, "new.txt"), "other\n");
  await expect(importPatch({ directory: repo, branch: "asyncagents/tsk_8", content: workerDiff(tree) })).rejects.toThrow("branch asyncagents/tsk_8 already exists");
});

test("a discarded remote task: worktree.remove with no path deletes its imported branch only", async () => {
  writeFileSync(join(tree, "new.txt"), "fresh\n");
  await importPatch({ directory: repo, branch: "asyncagents/tsk_7", content: workerDiff(tree) });
  const before = userState(repo);
  await WORKTREE_EFFECTS["worktree.remove"]({ kind: "worktree.remove", directory: repo, path: "", branch: "asyncagents/tsk_7" });
  expect(userState(repo)).toEqual({ ...before, branches: "main" });
});
