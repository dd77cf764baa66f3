// A remote isolated task's worktree on its worker (CONTRACT: worker.worktree.create, diff,
// remove, list), through the worker's own OpenCode API: OpenCode makes and removes the worktree, and the
// changes come back as a binary git patch that worktree.import turns into the local branch.
// What OpenCode 1.18.33 does here was measured on the real binary (CONTRACT36 "Changes", 03:47).

import { request, type Remote } from "./workers_client";
import { streamEvents } from "./workers_follow";
import { patchText } from "./worktree_import";

/** POST /experimental/worktree answers before the worktree's files are there: it waits this long for worktree.ready. */
export const WORKTREE_READY_MS = 120_000;
/** Each plain request's limit. */
export const REQUEST_MS = 30_000;
/** The diff's shell command's limit: git add -A of a large worktree. */
export const DIFF_MS = 120_000;

export interface WorkerWorktreeEffect {
  kind: string;
  directory?: string;
  path?: string;
  taskID?: string;
}

/**
 * Makes the worktree named after the task and replies {directory, branch} once OpenCode says it
 * is ready. The worker's stream is opened first: worktree.ready may come before the POST's answer.
 */
export async function createWorktree(remote: Remote, e: WorkerWorktreeEffect, timeoutMs = WORKTREE_READY_MS): Promise<{ directory: string; branch: string }> {
  const ac = new AbortController();
  const seen = new Map<string, { ok: boolean; message: string }>();
  let wake = () => {};
  let connected!: () => void;
  const isConnected = new Promise<void>((r) => (connected = r));
  const streamEnded = streamEvents(remote, ac.signal, (f) => {
    const type = f.payload?.type;
    if (type === "server.connected") connected();
    if ((type === "worktree.ready" || type === "worktree.failed") && f.directory) {
      seen.set(f.directory, { ok: type === "worktree.ready", message: f.payload?.properties?.message ?? "" });
      wake();
    }
  }, timeoutMs);
  try {
    const first = await Promise.race([isConnected.then(() => ""), streamEnded]);
    if (first) throw new Error(`following the worker's events: ${first}`);
    const res = await request(remote, "experimental/worktree", {
      directory: e.directory,
      body: { name: e.taskID || undefined },
      timeoutMs: REQUEST_MS,
    });
    const made = (await res.json()) as { directory?: string; branch?: string };
    if (!made?.directory) throw new Error("OpenCode answered without a directory");
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const s = seen.get(made.directory);
      if (s?.ok) return { directory: made.directory, branch: made.branch ?? "" };
      if (s) throw new Error(s.message || "worktree.failed");
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`not ready after ${timeoutMs / 1000} s`);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const ended = await Promise.race([
        new Promise<string>((r) => {
          wake = () => r("");
          timer = setTimeout(() => r(""), left);
        }),
        streamEnded,
      ]).finally(() => clearTimeout(timer));
      if (ended && !seen.has(made.directory)) throw new Error(`the worker's events stopped (${ended}) before it was ready`);
    }
  } finally {
    ac.abort();
  }
}

/**
 * The script that prints the worktree's changes since it was made: committed by the child or not,
 * untracked files included, binary files as git binary patches. Through a temporary index in the
 * worktree's git dir (the worktree's own index is left alone) and in base64 between markers, so
 * that no byte is lost on the way through OpenCode's JSON. The start is the branch's first reflog
 * entry (its creation), else HEAD.
 */
export const DIFF_SCRIPT = [
  `i="$(git rev-parse --absolute-git-dir)/asyncagents-index" && trap 'rm -f "$i" "$i.p"' EXIT && export GIT_INDEX_FILE="$i"`,
  `{ b=$(git reflog show --format=%H "$(git symbolic-ref -q HEAD)" -- 2>/dev/null | tail -n 1); [ -n "$b" ] || b=HEAD; }`,
  `git read-tree HEAD && git add -A && git diff --cached --binary --full-index "$b" > "$i.p"`,
  `printf 'asyncagents-patch:' && base64 < "$i.p" | tr -d '\n' && printf ':end\n'`,
].join(" && ");

/**
 * The command sent: the script in base64, decoded and run by bash. OpenCode 1.18's shell route
 * runs a command as `eval "<command>"`, so a `$i` in it is expanded before the command runs (to
 * nothing); a command of base64 letters has nothing to expand.
 */
export const DIFF_COMMAND = `printf %s ${Buffer.from(DIFF_SCRIPT).toString("base64")} | base64 -d | bash`;

const PATCH = /asyncagents-patch:([A-Za-z0-9+/=]*):end/;

/** The patch DIFF_COMMAND printed, one character per byte; fails with what it printed instead. */
export function patchFromOutput(output: string): string {
  const m = PATCH.exec(output);
  if (!m) throw new Error(output.trim().slice(0, 500) || "the command printed nothing");
  return patchText(Buffer.from(m[1], "base64"));
}

/**
 * Replies {patch}: the worktree's changes, from a throwaway session's shell in the worktree's
 * instance (GET /vcs/diff/raw leaves binary files out). The session goes again whatever happens.
 */
export async function diffWorktree(remote: Remote, e: WorkerWorktreeEffect): Promise<{ patch: string }> {
  const directory = e.directory;
  const created = await request(remote, "session", { directory, body: { title: "asyncagents: reading a worktree's changes" }, timeoutMs: REQUEST_MS });
  const id = ((await created.json()) as { id?: string })?.id;
  if (!id) throw new Error("OpenCode answered without a session");
  try {
    const res = await request(remote, `session/${encodeURIComponent(id)}/shell`, {
      directory,
      body: { agent: "build", command: DIFF_COMMAND },
      timeoutMs: DIFF_MS,
    });
    const reply = (await res.json()) as { parts?: { type?: string; state?: { output?: string } }[] };
    return { patch: patchFromOutput((reply?.parts ?? []).map((p) => p?.state?.output ?? "").join("\n")) };
  } finally {
    await request(remote, `session/${encodeURIComponent(id)}`, { method: "DELETE", directory, timeoutMs: REQUEST_MS }).catch(() => undefined);
  }
}

/** Removes the worktree path of the worker's clone (directory) and its branch; replies null. */
export async function removeWorktree(remote: Remote, e: WorkerWorktreeEffect): Promise<null> {
  await request(remote, "experimental/worktree", { method: "DELETE", directory: e.directory, body: { directory: e.path }, timeoutMs: REQUEST_MS });
  return null;
}

/** Replies {directories}: the worktrees OpenCode made of the clone (directory), as GET /experimental/worktree lists them. */
export async function listWorktrees(remote: Remote, e: WorkerWorktreeEffect): Promise<{ directories: string[] }> {
  const res = await request(remote, "experimental/worktree", { directory: e.directory, timeoutMs: REQUEST_MS });
  const got = (await res.json()) as unknown;
  if (!Array.isArray(got) || got.some((d) => typeof d !== "string")) throw new Error("OpenCode answered with no list of directories");
  return { directories: got as string[] };
}
