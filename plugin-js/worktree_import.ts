// Brings a remote isolated task's changes home (CONTRACT36: worktree.import): the patch its worker
// gave (worker.worktree.diff) becomes one commit over the parent's HEAD, on the task's branch.
// Everything goes through a temporary index with plumbing (apply --cached, write-tree,
// commit-tree, update-ref): the user's index, working tree and checked-out branch never change.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { branchExists, committed, git, GitError, headCommit, identity, need, run, topLevel, type WorktreeEffect } from "./worktree";

/**
 * The patch's bytes. The worker's diff travels one character per byte (latin1: a patch's text
 * lines may hold bytes that are no UTF-8, and JSON carries any character below 256 as it is); a
 * character above 255 can only come from text that was never such a transport, and is UTF-8.
 */
export function patchBytes(content: string): Buffer {
  for (let i = 0; i < content.length; i++) if (content.charCodeAt(i) > 255) return Buffer.from(content, "utf8");
  return Buffer.from(content, "latin1");
}

/** The patch's bytes as the worker's diff sends them: one character per byte. */
export function patchText(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("latin1");
}

async function importPatch(e: WorktreeEffect) {
  const top = await topLevel(need(e, "directory"));
  const branch = need(e, "branch");
  const patch = patchBytes(e.content ?? "");
  if (patch.length === 0) return { commit: "" };
  if (await branchExists(top, branch)) {
    // A stop between this import and the core hearing of it leaves the branch made: the import
    // asked again finds its own commit, and answers as it did.
    const done = await sameImport(top, branch, patch, e.maxBytes ?? 0);
    if (done) return done;
    throw new GitError(`branch ${branch} already exists`);
  }
  const base = await headCommit(top);
  if (!base) throw new GitError(`the repository has no commit to put the changes on: ${top}`);
  const dir = mkdtempSync(join(tmpdir(), "asyncagents-import-"));
  try {
    const env = { GIT_INDEX_FILE: join(dir, "index") };
    const tree = await patchedTree(top, base, patch, env);
    if (tree === (await git(top, ["rev-parse", `${base}^{tree}`]))) return { base, commit: "" };
    const message = e.message || `asyncagents: ${e.taskID ?? branch}`;
    const sha = await git(top, ["commit-tree", tree, "-p", base, "-m", message], { env: { ...env, ...(await identity(top)) } });
    // The empty old value: the branch is created, never moved, should one appear meanwhile.
    await git(top, ["update-ref", "-m", "asyncagents: import", `refs/heads/${branch}`, sha, ""]);
    return { base, ...(await committed(top, base, sha, e.maxBytes ?? 0)) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The tree of base with patch applied, in the temporary index env names; throws when it does not apply. */
async function patchedTree(top: string, base: string, patch: Buffer, env: Record<string, string>): Promise<string> {
  await git(top, ["read-tree", base], { env });
  const applied = await run(top, ["apply", "--cached", "--binary", "-"], { env, stdin: patch });
  if (applied.code !== 0) {
    // The worker's clone may stand on another commit than the parent's HEAD: a three-way apply
    // merges the patch from the blobs it names, when this repository has them.
    await git(top, ["read-tree", base], { env });
    const merged = await run(top, ["apply", "--cached", "--binary", "--3way", "-"], { env, stdin: patch });
    if (merged.code !== 0) throw new GitError(merged.stderr || applied.stderr || `git apply failed (exit ${merged.code})`);
  }
  return git(top, ["write-tree"], { env });
}

/**
 * The import's answer when branch already holds this very import: one commit over one parent,
 * whose tree is the patch applied to that parent. Anything else (the user's commits on it, other
 * changes) is not ours to take: undefined.
 */
async function sameImport(top: string, branch: string, patch: Buffer, maxBytes: number) {
  const line = (await git(top, ["rev-list", "--parents", "-n", "1", `refs/heads/${branch}`])).split(" ");
  if (line.length !== 2) return undefined;
  const [sha, base] = line;
  const dir = mkdtempSync(join(tmpdir(), "asyncagents-import-"));
  try {
    const tree = await patchedTree(top, base, patch, { GIT_INDEX_FILE: join(dir, "index") }).catch(() => "");
    if (!tree || tree !== (await git(top, ["rev-parse", `${sha}^{tree}`]))) return undefined;
    return { base, ...(await committed(top, base, sha, maxBytes)) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The import effect, by kind, next to worktree.ts's WORKTREE_EFFECTS. */
export const IMPORT_EFFECTS: Record<string, (e: WorktreeEffect) => Promise<unknown>> = {
  "worktree.import": importPatch,
};
