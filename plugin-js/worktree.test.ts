// The git executor on real temporary repositories: what reaches a worktree, what the user's
// repository keeps, each refusal, the one commit, and the merge back.

import { afterEach, beforeEach, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { WORKTREE_EFFECTS } from "./worktree";

let root = "";
let repo = "";
let trees = "";
const savedEnv = { HOME: process.env.HOME, GIT_CONFIG_NOSYSTEM: process.env.GIT_CONFIG_NOSYSTEM, PATH: process.env.PATH };

function sh(cwd: string, ...args: string[]): string {
  const r = spawnSync("git", args, { cwd, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
  return r.stdout.trim();
}

function write(dir: string, name: string, text: string) {
  mkdirSync(join(dir, name, ".."), { recursive: true });
  writeFileSync(join(dir, name), text);
}

const run = (kind: string, e: Record<string, unknown>) => WORKTREE_EFFECTS[kind]({ kind, ...e }) as Promise<any>;
const create = (id: string) => run("worktree.create", { taskID: id, directory: repo, path: join(trees, id), branch: `asyncagents/${id}` });

/** Every file under dir (but .git) with its bytes: a tree compared byte for byte. */
function snapshotFiles(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (name === ".git") continue;
      if (statSync(p).isDirectory()) walk(p);
      else out[relative(dir, p)] = readFileSync(p).toString("base64");
    }
  };
  walk(dir);
  return out;
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "aa-worktree-"));
  process.env.HOME = root;
  process.env.GIT_CONFIG_NOSYSTEM = "1";
  repo = join(root, "project");
  trees = join(root, "data", "worktrees", "key");
  mkdirSync(repo);
  sh(repo, "init", "-q", "-b", "main");
  sh(repo, "config", "user.name", "User");
  sh(repo, "config", "user.email", "user@example.com");
  write(repo, ".gitignore", "secret.env\n");
  write(repo, "a.txt", "one\ntwo\nthree\n");
  write(repo, "b.txt", "bee\n");
  sh(repo, "add", "-A");
  sh(repo, "commit", "-q", "-m", "first");
});

afterEach(() => {
  Object.assign(process.env, savedEnv);
  rmSync(root, { recursive: true, force: true });
});

test("create: uncommitted and untracked changes reach the worktree; ignored files stay out", async () => {
  write(repo, "a.txt", "one\nTWO\nthree\n");
  write(repo, "new/untracked.txt", "fresh\n");
  write(repo, "secret.env", "KEY=1\n");
  const r = await create("bg_1");
  const wt = join(trees, "bg_1");
  expect(r.path).toBe(wt);
  expect(r.head).toBe(sh(repo, "rev-parse", "HEAD"));
  expect(readFileSync(join(wt, "a.txt"), "utf8")).toBe("one\nTWO\nthree\n");
  expect(readFileSync(join(wt, "new/untracked.txt"), "utf8")).toBe("fresh\n");
  expect(existsSync(join(wt, "secret.env"))).toBe(false);
  expect(sh(wt, "rev-parse", "HEAD")).toBe(r.base);
  expect(sh(wt, "rev-parse", "--abbrev-ref", "HEAD")).toBe("asyncagents/bg_1");
  expect(sh(repo, "rev-parse", `${r.base}^`)).toBe(r.head);
});

test("create: a same-size edit in the second the index was written still reaches the worktree (racy git)", async () => {
  // The edit lands in the second of the index's last write (retried until it does), and the
  // snapshot starts in a later second: a copy of the index with its own, newer time would make git
  // trust the stat data, equal at a second's resolution, and keep the committed text.
  const index = join(repo, ".git", "index");
  for (let i = 0; i < 20; i++) {
    write(repo, "a.txt", "one\ntwo\nthree\n");
    sh(repo, "add", "a.txt");
    write(repo, "a.txt", "one\nTWO\nthree\n");
    if (Math.floor(statSync(index).mtimeMs / 1000) === Math.floor(statSync(join(repo, "a.txt")).mtimeMs / 1000)) break;
  }
  const second = Math.floor(statSync(index).mtimeMs / 1000);
  while (Math.floor(Date.now() / 1000) === second) await Bun.sleep(20);
  await create("bg_racy");
  expect(readFileSync(join(trees, "bg_racy", "a.txt"), "utf8")).toBe("one\nTWO\nthree\n");
});

test("create leaves the user's index, stash and branches as they were", async () => {
  write(repo, "a.txt", "staged\n");
  sh(repo, "add", "a.txt");
  write(repo, "b.txt", "unstaged\n");
  write(repo, "c.txt", "untracked\n");
  write(repo, "b.txt", "stashed\n");
  sh(repo, "stash", "push", "-q", "b.txt");
  write(repo, "b.txt", "unstaged\n");
  const index = readFileSync(join(repo, ".git/index"));
  const stash = sh(repo, "stash", "list");
  const branches = sh(repo, "for-each-ref", "refs/heads");
  const status = sh(repo, "status", "--porcelain");
  await create("bg_2");
  expect(readFileSync(join(repo, ".git/index")).equals(index)).toBe(true);
  expect(sh(repo, "stash", "list")).toBe(stash);
  const ours = (line: string) => !line.endsWith("refs/heads/asyncagents/bg_2");
  expect(sh(repo, "for-each-ref", "refs/heads").split("\n").filter(ours).join("\n")).toBe(branches);
  expect(sh(repo, "status", "--porcelain")).toBe(status);
  expect(sh(repo, "rev-parse", "--abbrev-ref", "HEAD")).toBe("main");
});

test("create in a repository without commits makes a root snapshot", async () => {
  const fresh = join(root, "fresh");
  mkdirSync(fresh);
  sh(fresh, "init", "-q");
  write(fresh, "x.txt", "x\n");
  const r = await run("worktree.create", { taskID: "bg_0", directory: fresh, path: join(trees, "bg_0"), branch: "asyncagents/bg_0" });
  expect(r.head).toBe("");
  expect(readFileSync(join(trees, "bg_0", "x.txt"), "utf8")).toBe("x\n");
});

async function refusal(e: Promise<unknown>): Promise<string> {
  try {
    await e;
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error("expected a refusal");
}

function nothingCreated() {
  expect(existsSync(trees) ? readdirSync(trees) : []).toEqual([]);
  expect(sh(repo, "for-each-ref", "refs/heads/asyncagents")).toBe("");
}

test("refusals: no git repository, no git at all", async () => {
  const plain = join(root, "plain");
  mkdirSync(plain);
  expect(await refusal(run("worktree.create", { directory: plain, path: join(trees, "x"), branch: "asyncagents/x" }))).toBe(`not a git repository: ${plain}`);
  process.env.PATH = join(root, "empty-bin");
  expect(await refusal(create("bg_3"))).toBe("git is not installed (no git on PATH)");
  process.env.PATH = savedEnv.PATH;
  nothingCreated();
});

test("refusals: a merge, a rebase, a cherry-pick in progress", async () => {
  for (const [file, what] of [
    ["MERGE_HEAD", "a merge"],
    ["rebase-merge", "a rebase"],
    ["CHERRY_PICK_HEAD", "a cherry-pick"],
  ]) {
    const p = join(repo, ".git", file);
    if (file === "rebase-merge") mkdirSync(p);
    else writeFileSync(p, sh(repo, "rev-parse", "HEAD") + "\n");
    expect(await refusal(create("bg_4"))).toBe(`the repository is in the middle of ${what}: ${repo}`);
    rmSync(p, { recursive: true });
  }
  nothingCreated();
});

test("refusal: the branch is taken, and the existing branch is untouched", async () => {
  sh(repo, "branch", "asyncagents/bg_5");
  const before = sh(repo, "rev-parse", "asyncagents/bg_5");
  expect(await refusal(create("bg_5"))).toBe("branch asyncagents/bg_5 already exists");
  expect(sh(repo, "rev-parse", "asyncagents/bg_5")).toBe(before);
  expect(existsSync(join(trees, "bg_5"))).toBe(false);
});

test("a failing worktree add (unwritable folder) leaves no folder and no branch, with git's words", async () => {
  mkdirSync(trees, { recursive: true });
  writeFileSync(join(trees, "blocker"), "a file where a folder must go");
  const msg = await refusal(run("worktree.create", { taskID: "bg_6", directory: repo, path: join(trees, "blocker", "bg_6"), branch: "asyncagents/bg_6" }));
  expect(msg).toContain("blocker");
  expect(sh(repo, "for-each-ref", "refs/heads/asyncagents")).toBe("");
});

test("commit squashes the child's own commits into one, with numstat and the diff", async () => {
  const r = await create("bg_7");
  const wt = r.path;
  write(wt, "a.txt", "one\ntwo\nthree\nfour\n");
  sh(wt, "commit", "-q", "-am", "child's own");
  write(wt, "b.txt", "");
  write(wt, "bin.dat", "\u0000\u0001\u0002");
  const c = await run("worktree.commit", { taskID: "bg_7", path: wt, base: r.base, message: "Add four", maxBytes: 1 << 20 });
  expect(sh(wt, "rev-list", "--count", `${r.base}..HEAD`)).toBe("1");
  expect(sh(wt, "log", "-1", "--format=%s")).toBe("Add four");
  expect(c.commit).toBe(sh(wt, "rev-parse", "HEAD"));
  expect(c.files).toEqual([
    { path: "a.txt", added: 1, removed: 0 },
    { path: "b.txt", added: 0, removed: 1 },
    { path: "bin.dat", added: -1, removed: -1 },
  ]);
  expect(c.diff).toContain("+four");
  expect(c.diffCut).toBeUndefined();
  const cut = await run("worktree.commit", { taskID: "bg_7", path: wt, base: r.base, message: "Add four", maxBytes: 10 });
  expect(cut.diff.length).toBe(10);
  expect(cut.diffCut).toBe(true);
});

test("commit with no changes makes no commit and no files", async () => {
  const r = await create("bg_8");
  const c = await run("worktree.commit", { taskID: "bg_8", path: r.path, base: r.base, message: "nothing" });
  expect(c).toEqual({ commit: "", files: [] });
});

test("commit without a git identity uses asyncagents'", async () => {
  const r = await create("bg_9");
  sh(repo, "config", "--unset", "user.name");
  sh(repo, "config", "--unset", "user.email");
  write(r.path, "a.txt", "changed\n");
  await run("worktree.commit", { taskID: "bg_9", path: r.path, base: r.base, message: "m" });
  expect(sh(r.path, "log", "-1", "--format=%an <%ae>")).toBe("asyncagents <asyncagents@localhost>");
});

test("remove deletes the worktree, and the branch only when named; missing things are fine", async () => {
  const r = await create("bg_10");
  expect(await run("worktree.remove", { taskID: "bg_10", directory: repo, path: r.path, branch: "" })).toEqual({});
  expect(existsSync(r.path)).toBe(false);
  expect(sh(repo, "for-each-ref", "--format=%(refname)", "refs/heads/asyncagents")).toBe("refs/heads/asyncagents/bg_10");
  await run("worktree.remove", { taskID: "bg_10", directory: repo, path: r.path, branch: "asyncagents/bg_10" });
  expect(sh(repo, "for-each-ref", "refs/heads/asyncagents")).toBe("");
  expect(sh(repo, "worktree", "list", "--porcelain")).not.toContain("bg_10");
});

test("inspect lists every dirty path, both sides of a rename", async () => {
  write(repo, "a.txt", "changed\n");
  write(repo, "dir/new.txt", "n\n");
  sh(repo, "mv", "b.txt", "renamed.txt");
  write(repo, "secret.env", "ignored\n");
  const r = await run("worktree.inspect", { directory: repo });
  expect([...r.dirty].sort()).toEqual(["a.txt", "b.txt", "dir/new.txt", "renamed.txt"]);
});

async function finished(id: string, edit: (wt: string) => void) {
  const r = await create(id);
  edit(r.path);
  const c = await run("worktree.commit", { taskID: id, path: r.path, base: r.base, message: id });
  return { ...r, ...c };
}

test("merge: clean applies to the working tree only; a conflict changes nothing, byte for byte", async () => {
  write(repo, "b.txt", "parent's uncommitted\n");
  const first = await finished("bg_11", (wt) => write(wt, "a.txt", "one\ntwo\nthree\nfirst\n"));
  const second = await finished("bg_12", (wt) => write(wt, "a.txt", "one\ntwo\nthree\nsecond\n"));
  const index = readFileSync(join(repo, ".git/index"));
  const m1 = await run("worktree.merge", { taskID: "bg_11", directory: repo, base: first.base, commit: first.commit });
  expect(m1).toEqual({ applied: ["a.txt"] });
  expect(readFileSync(join(repo, "a.txt"), "utf8")).toBe("one\ntwo\nthree\nfirst\n");
  expect(readFileSync(join(repo, "b.txt"), "utf8")).toBe("parent's uncommitted\n");
  expect(readFileSync(join(repo, ".git/index")).equals(index)).toBe(true);
  const tree = snapshotFiles(repo);
  const m2 = await run("worktree.merge", { taskID: "bg_12", directory: repo, base: second.base, commit: second.commit });
  expect(m2).toEqual({ conflicts: ["a.txt"] });
  expect(snapshotFiles(repo)).toEqual(tree);
  expect(readFileSync(join(repo, ".git/index")).equals(index)).toBe(true);
});

test("merge base is the launch snapshot: a parent edit after launch in another file does not conflict", async () => {
  write(repo, "a.txt", "one\ntwo\nthree\nparent before launch\n");
  const t = await finished("bg_13", (wt) => write(wt, "b.txt", "child\n"));
  write(repo, "c.txt", "parent after launch\n");
  const m = await run("worktree.merge", { taskID: "bg_13", directory: repo, base: t.base, commit: t.commit });
  expect(m).toEqual({ applied: ["b.txt"] });
  expect(readFileSync(join(repo, "a.txt"), "utf8")).toBe("one\ntwo\nthree\nparent before launch\n");
  expect(readFileSync(join(repo, "b.txt"), "utf8")).toBe("child\n");
  expect(readFileSync(join(repo, "c.txt"), "utf8")).toBe("parent after launch\n");
});

test("list: asyncagents worktrees and stray folders, with whether they hold changes", async () => {
  const clean = await create("bg_14");
  const edited = await finished("bg_15", (wt) => write(wt, "a.txt", "x\n"));
  const dirty = await create("bg_16");
  write(dirty.path, "u.txt", "u\n");
  mkdirSync(join(trees, "bg_stray"));
  const r = await run("worktree.list", { directory: repo, path: trees });
  const byPath = Object.fromEntries(r.worktrees.map((w: any) => [w.path, w]));
  expect(byPath[clean.path]).toEqual({ path: clean.path, branch: "asyncagents/bg_14", changed: false });
  expect(byPath[edited.path]).toEqual({ path: edited.path, branch: "asyncagents/bg_15", changed: true });
  expect(byPath[dirty.path]).toEqual({ path: dirty.path, branch: "asyncagents/bg_16", changed: true });
  expect(byPath[join(trees, "bg_stray")]).toEqual({ path: join(trees, "bg_stray"), branch: "", changed: false });
  expect(r.worktrees.length).toBe(4);
});

test("create links the project's ignored .opencode dependencies, and nothing git would commit", async () => {
  write(repo, ".opencode/.gitignore", "node_modules\npackage.json\n");
  write(repo, ".opencode/node_modules/@opencode-ai/plugin/index.js", "x");
  write(repo, ".opencode/package.json", "{}");
  write(repo, ".opencode/bun.lock", "tracked lock");
  const r = await create("bg_17");
  expect(readFileSync(join(r.path, ".opencode/node_modules/@opencode-ai/plugin/index.js"), "utf8")).toBe("x");
  expect(readFileSync(join(r.path, ".opencode/package.json"), "utf8")).toBe("{}");
  expect(sh(r.path, "status", "--porcelain")).toBe("");
  const c = await run("worktree.commit", { taskID: "bg_17", path: r.path, base: r.base, message: "m" });
  expect(c.files).toEqual([]);
});
