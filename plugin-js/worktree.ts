// Carries out the core's worktree effects (CONTRACT: worktree.create, commit, remove, inspect,
// merge, list) with git. The core chose the paths, branches and messages; this file only runs
// git, always with argument arrays (never a shell string) and a time limit, and reports git's own
// words when it fails. The user's index, stash and branches are never touched: snapshots of the
// parent's tree go through a copy of the index (GIT_INDEX_FILE).

import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/** Each git call's limit: far above what a snapshot of a large repository takes. */
export const GIT_TIMEOUT_MS = 120_000;

/** The committer when the user has no git identity: commits still need one. */
const FALLBACK_NAME = "asyncagents";
const FALLBACK_EMAIL = "asyncagents@localhost";

export interface WorktreeEffect {
  kind: string;
  taskID?: string;
  directory?: string;
  path?: string;
  branch?: string;
  base?: string;
  commit?: string;
  message?: string;
  maxBytes?: number;
  /** worktree.import's patch, one character per byte. */
  content?: string;
}

interface Run {
  code: number;
  stdout: Uint8Array;
  stderr: string;
}

export class GitError extends Error {}

/** Runs git with args in cwd; never throws for a non-zero exit (see git()). */
export async function run(cwd: string, args: string[], opts: { env?: Record<string, string>; stdin?: Uint8Array } = {}): Promise<Run> {
  let proc;
  try {
    proc = Bun.spawn(["git", ...args], {
      cwd,
      env: { ...process.env, ...opts.env, GIT_TERMINAL_PROMPT: "0" },
      stdin: opts.stdin ?? "ignore",
      stdout: "pipe",
      stderr: "pipe",
      timeout: GIT_TIMEOUT_MS,
      killSignal: "SIGKILL",
    });
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "ENOENT" && !existsSync(cwd)) throw new GitError(`no such directory: ${cwd}`);
    if (code === "ENOENT") throw new GitError("git is not installed (no git on PATH)");
    throw new GitError(`cannot run git: ${(err as Error).message}`);
  }
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).bytes(), new Response(proc.stderr).text(), proc.exited]);
  if (proc.signalCode === "SIGKILL") throw new GitError(`git ${args[0]} did not finish within ${GIT_TIMEOUT_MS / 1000} s`);
  // Bun's Response.bytes() gave an ArrayBuffer, not a Uint8Array, for a 15 KB diff: a cut by
  // length then saw no length and never cut.
  return { code, stdout: stdout instanceof Uint8Array ? stdout : new Uint8Array(stdout as ArrayBuffer), stderr: stderr.trim() };
}

/** Runs git and returns its output as text, trimmed; a non-zero exit throws git's stderr. */
export async function git(cwd: string, args: string[], opts: { env?: Record<string, string>; stdin?: Uint8Array; ok?: number[] } = {}): Promise<string> {
  const r = await run(cwd, args, opts);
  if (r.code !== 0 && !(opts.ok ?? []).includes(r.code)) throw new GitError(r.stderr || `git ${args[0]} failed (exit ${r.code})`);
  return new TextDecoder().decode(r.stdout).trim();
}

/** The top of the repository holding dir, or a refusal naming dir. */
export async function topLevel(dir: string): Promise<string> {
  const r = await run(dir, ["rev-parse", "--show-toplevel"]);
  if (r.code !== 0) throw new GitError(`not a git repository: ${dir}`);
  return new TextDecoder().decode(r.stdout).trim();
}

async function gitPath(top: string, name: string): Promise<string> {
  return resolve(top, await git(top, ["rev-parse", "--git-path", name]));
}

/** The operations git leaves half done, by the file or folder that shows one is under way. */
const IN_PROGRESS: [string, string][] = [
  ["MERGE_HEAD", "a merge"],
  ["rebase-merge", "a rebase"],
  ["rebase-apply", "a rebase"],
  ["CHERRY_PICK_HEAD", "a cherry-pick"],
  ["REVERT_HEAD", "a revert"],
];

async function refuseInProgress(top: string): Promise<void> {
  for (const [name, what] of IN_PROGRESS) {
    if (existsSync(await gitPath(top, name))) throw new GitError(`the repository is in the middle of ${what}: ${top}`);
  }
}

/** HEAD's commit, or "" in a repository without commits. */
export async function headCommit(dir: string): Promise<string> {
  return git(dir, ["rev-parse", "--verify", "-q", "HEAD^{commit}"], { ok: [1] });
}

/** The user's identity when set, else ours, as environment for commit and commit-tree. */
export async function identity(dir: string): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  const name = await git(dir, ["config", "user.name"], { ok: [1] });
  const email = await git(dir, ["config", "user.email"], { ok: [1] });
  if (!name) env.GIT_AUTHOR_NAME = env.GIT_COMMITTER_NAME = FALLBACK_NAME;
  if (!email) env.GIT_AUTHOR_EMAIL = env.GIT_COMMITTER_EMAIL = FALLBACK_EMAIL;
  return env;
}

/**
 * Commits the working tree of top as it is (tracked, untracked, not ignored) with parent, through
 * a copy of the index, so the user's own index never changes.
 */
async function snapshot(top: string, parent: string, message: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "asyncagents-index-"));
  try {
    const index = join(dir, "index");
    const own = await gitPath(top, "index");
    if (existsSync(own)) {
      copyFileSync(own, index);
      // Racy git: git trusts an entry's stat data when the entry is older than the index file,
      // and a copy is newer than its original. A file rewritten at the same size in the second
      // the index was last written would then look unchanged and miss the snapshot; with the
      // original's times (rounded down to the millisecond) git checks its contents as it would.
      const { atime, mtime } = statSync(own);
      utimesSync(index, atime, mtime);
    }
    const env = { GIT_INDEX_FILE: index };
    await git(top, ["add", "-A"], { env });
    const tree = await git(top, ["write-tree"], { env });
    const args = ["commit-tree", tree, "-m", message];
    if (parent) args.splice(2, 0, "-p", parent);
    return await git(top, args, { env: { ...env, ...(await identity(top)) } });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function branchExists(dir: string, branch: string): Promise<boolean> {
  return (await run(dir, ["show-ref", "--verify", "--quiet", `refs/heads/${branch}`])).code === 0;
}

/** Test hook: the crash test stops the executor between `worktree add` and its reply. */
const HOLD_FILE_ENV = "ASYNCAGENTS_TEST_HOLD_WORKTREE";

async function create(e: WorktreeEffect) {
  const top = await topLevel(need(e, "directory"));
  const path = need(e, "path");
  const branch = need(e, "branch");
  await refuseInProgress(top);
  if (await branchExists(top, branch)) throw new GitError(`branch ${branch} already exists`);
  if (existsSync(path)) throw new GitError(`the worktree folder already exists: ${path}`);
  const head = await headCommit(top);
  const base = await snapshot(top, head, `asyncagents: the parent's tree at launch of ${e.taskID ?? branch}`);
  try {
    await git(top, ["worktree", "add", "-b", branch, path, base]);
  } catch (err) {
    await removeWorktree(top, path, branch).catch(() => undefined);
    throw err;
  }
  await linkOpenCodeDependencies(top, path);
  const hold = process.env[HOLD_FILE_ENV];
  if (hold) {
    writeFileSync(hold, path);
    await new Promise(() => {});
  }
  return { path, base, head };
}

/**
 * Gives the worktree's .opencode the project's installed dependencies. git ignores them, so the
 * worktree has none, and OpenCode would install them (npm, network) before it loads any plugin in
 * the worktree's instance: the child's start waited 21 s for it offline (TestWorktreeInstance).
 * Only what the worktree lacks is added, which is only what git ignores.
 */
async function linkOpenCodeDependencies(top: string, path: string): Promise<void> {
  const from = join(top, ".opencode");
  const to = join(path, ".opencode");
  if (!existsSync(join(from, "node_modules"))) return;
  for (const name of ["node_modules", "package.json", "package-lock.json", "bun.lock"]) {
    if (!existsSync(join(from, name)) || existsSync(join(to, name))) continue;
    // What git would commit is no business of ours: only what it ignores.
    if ((await run(path, ["check-ignore", "-q", `.opencode/${name}`])).code !== 0) continue;
    mkdirSync(to, { recursive: true });
    if (name === "node_modules") symlinkSync(join(from, name), join(to, name));
    else copyFileSync(join(from, name), join(to, name));
  }
}

async function commit(e: WorktreeEffect) {
  const path = need(e, "path");
  const base = need(e, "base");
  await git(path, ["add", "-A"]);
  // The child may have committed on its own: its commits become the one commit.
  await git(path, ["reset", "--soft", base]);
  const staged = (await run(path, ["diff", "--cached", "--quiet"])).code === 1;
  let sha = "";
  if (staged) {
    await git(path, ["commit", "--no-verify", "-q", "-m", e.message || `asyncagents: ${e.taskID ?? "task"}`], { env: await identity(path) });
    sha = await git(path, ["rev-parse", "HEAD"]);
  }
  if (!sha) return { commit: "", files: [] };
  return committed(path, base, sha, e.maxBytes ?? 0);
}

/** A commit's reply: its files with their line counts, and its diff from base cut to max bytes (0: whole). */
export async function committed(dir: string, base: string, sha: string, max: number): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = { commit: sha, files: await numstat(dir, base, sha) };
  const diff = (await run(dir, ["diff", "--binary", base, sha])).stdout;
  const cut = max > 0 && diff.length > max;
  out.diff = new TextDecoder().decode(cut ? diff.subarray(0, max) : diff);
  if (cut) out.diffCut = true;
  return out;
}

/** The files changed between two commits, with lines added and removed (-1 for binary files). */
async function numstat(dir: string, from: string, to: string) {
  const raw = new TextDecoder().decode((await run(dir, ["diff", "--numstat", "-z", "--no-renames", from, to])).stdout);
  const files: { path: string; added: number; removed: number }[] = [];
  for (const entry of raw.split("\0")) {
    const m = /^(-|\d+)\t(-|\d+)\t(.*)$/s.exec(entry);
    if (m) files.push({ path: m[3], added: m[1] === "-" ? -1 : Number(m[1]), removed: m[2] === "-" ? -1 : Number(m[2]) });
  }
  return files;
}

/** Removes a worktree and, when branch is set, its branch; what is already gone is no error. */
async function removeWorktree(top: string, path: string, branch: string): Promise<void> {
  if (path) {
    await run(top, ["worktree", "remove", "--force", path]);
    removeFolder(path);
    await run(top, ["worktree", "prune"]);
  }
  if (branch && (await branchExists(top, branch))) await git(top, ["branch", "-D", branch]);
}

async function remove(e: WorktreeEffect) {
  const dir = need(e, "directory");
  if (!existsSync(dir)) {
    removeFolder(e.path ?? "");
    return {};
  }
  await removeWorktree(await topLevel(dir), e.path ?? "", e.branch ?? "");
  return {};
}

/** Every path with uncommitted changes (both sides of a rename), relative to the repository's top. */
async function dirtyPaths(top: string): Promise<string[]> {
  const raw = new TextDecoder().decode((await run(top, ["status", "--porcelain", "-z", "--untracked-files=all"])).stdout);
  const parts = raw.split("\0");
  const paths: string[] = [];
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i];
    if (p.length < 4) continue;
    paths.push(p.slice(3));
    // A rename or copy is followed by its source.
    if ((p[0] === "R" || p[0] === "C") && i + 1 < parts.length) paths.push(parts[++i]);
  }
  return paths;
}

async function inspect(e: WorktreeEffect) {
  return { dirty: await dirtyPaths(await topLevel(need(e, "directory"))) };
}

async function merge(e: WorktreeEffect) {
  const top = await topLevel(need(e, "directory"));
  const base = need(e, "base");
  const theirs = need(e, "commit");
  await refuseInProgress(top);
  // The parent's tree now, on top of the task's starting point: the merge base is that snapshot.
  const ours = await snapshot(top, base, `asyncagents: the parent's tree at merge of ${e.taskID ?? theirs}`);
  const r = await run(top, ["merge-tree", "--write-tree", "--name-only", "-z", ours, theirs]);
  if (r.code !== 0 && r.code !== 1) throw new GitError(r.stderr || `git merge-tree failed (exit ${r.code})`);
  const fields = new TextDecoder().decode(r.stdout).split("\0");
  const tree = fields[0];
  if (r.code === 1) {
    // After the tree: the conflicted paths, then an empty field, then git's messages.
    const conflicts: string[] = [];
    for (const f of fields.slice(1)) {
      if (f === "") break;
      if (!conflicts.includes(f)) conflicts.push(f);
    }
    return { conflicts };
  }
  const patch = (await run(top, ["diff", "--binary", "--full-index", ours, tree])).stdout;
  const applied = (await git(top, ["diff", "--name-only", "-z", ours, tree])).split("\0").filter((p) => p !== "");
  if (patch.length > 0) await git(top, ["apply", "--binary", "-"], { stdin: patch });
  return { applied };
}

/** The worktrees of the project: its git worktrees on asyncagents/ branches and every folder under path. */
async function list(e: WorktreeEffect) {
  const dir = need(e, "directory");
  const folder = e.path ?? "";
  const found = new Map<string, string>();
  let top = "";
  try {
    top = await topLevel(dir);
  } catch {}
  if (top) {
    const raw = await git(top, ["worktree", "list", "--porcelain", "-z"]);
    let path = "";
    for (const f of raw.split("\0")) {
      if (f.startsWith("worktree ")) path = f.slice(9);
      else if (f.startsWith("branch refs/heads/asyncagents/")) found.set(path, f.slice(18));
    }
  }
  if (folder && existsSync(folder)) {
    for (const name of readdirSync(folder)) {
      const p = join(folder, name);
      if (![...found.keys()].some((k) => resolve(k) === resolve(p))) found.set(p, "");
    }
  }
  const worktrees = [];
  for (const [path, branch] of found) worktrees.push({ path, branch, changed: top ? await changed(top, path, branch) : false });
  return { worktrees };
}

/** Whether a worktree holds uncommitted changes or commits beyond its snapshot. */
async function changed(top: string, path: string, branch: string): Promise<boolean> {
  if (existsSync(path)) {
    const r = await run(path, ["status", "--porcelain", "--untracked-files=all"]);
    if (r.code === 0 && r.stdout.length > 0) return true;
  }
  if (!branch) return false;
  const count = await git(top, ["rev-list", "--count", branch, "--not", "HEAD"], { ok: [128] });
  return Number(count || "0") > 1;
}

/** Removes a folder; one that cannot exist (a file in its path) is as good as gone. */
function removeFolder(path: string): void {
  try {
    if (path) rmSync(path, { recursive: true, force: true });
  } catch (err) {
    if ((err as { code?: string }).code !== "ENOTDIR") throw err;
  }
}

export function need(e: WorktreeEffect, field: keyof WorktreeEffect): string {
  const v = e[field];
  if (typeof v !== "string" || v === "") throw new GitError(`${e.kind}: ${field} is missing`);
  return v;
}

/** The worktree effects this file carries out, by kind. */
export const WORKTREE_EFFECTS: Record<string, (e: WorktreeEffect) => Promise<unknown>> = {
  "worktree.create": create,
  "worktree.commit": commit,
  "worktree.remove": remove,
  "worktree.inspect": inspect,
  "worktree.merge": merge,
  "worktree.list": list,
};
