// Carries out the effects the core gives a worker (an effect with `worker` set, CONTRACT36): the
// session effects of a task placed there, sent straight to the worker's `opencode serve` with the
// same bodies and replies as the local ones (effects.ts), and the worker's own effects (follow,
// health, its worktree). Runs in the thread the core runs in, so a remote task's requests never
// wait on OpenCode's thread. Every failure names the worker; none holds the password.

import type { Effect } from "../bridge/core";
import { agentsReply, childrenReply, createBody, permissionReplyBody, promptBody, summarizeBody, type Perform } from "./effects";
import { health, request, type Remote } from "./workers_client";
import type { WorkerFollowers } from "./workers_follow";
import { createWorktree, diffWorktree, listWorktrees, removeWorktree, REQUEST_MS } from "./workers_worktree";

/** A compaction waits for the model's summary: OpenCode answers once it is done. */
export const SUMMARIZE_MS = 600_000;

/** An effect as the core sends it for a worker (worker and remote set). */
export type WorkerEffect = Effect;

interface SessionRoute {
  /** What the request does, for its error text (the same words as the local executor's). */
  what: string;
  method: "GET" | "POST" | "DELETE";
  path: (e: WorkerEffect) => string;
  body?: (e: WorkerEffect) => unknown;
  /** The reply the core expects, from OpenCode's answer (null: none). */
  reply: (data: any) => unknown;
  timeoutMs?: number;
}

const id = (e: WorkerEffect) => encodeURIComponent(e.sessionID ?? "");
const none = () => null;

/** OpenCode 1.18's routes for the session effects (and the agent list), as effects.ts calls them through the SDK. */
export const SESSION_ROUTES: Record<string, SessionRoute> = {
  "session.create": { what: "creating the session", method: "POST", path: () => "session", body: createBody, reply: (s) => ({ id: s?.id, created: s?.time?.created }) },
  "session.promptAsync": { what: "prompting the session", method: "POST", path: (e) => `session/${id(e)}/prompt_async`, body: promptBody, reply: none },
  "session.messages": { what: "reading the messages", method: "GET", path: (e) => `session/${id(e)}/message${e.limit ? `?limit=${e.limit}` : ""}`, reply: (m) => m, timeoutMs: 60_000 },
  "session.status": { what: "reading session status", method: "GET", path: () => "session/status", reply: (s) => s ?? {} },
  "session.get": { what: "reading the session", method: "GET", path: (e) => `session/${id(e)}`, reply: (s) => ({ id: s?.id, parentID: s?.parentID }) },
  "session.children": { what: "reading the session's children", method: "GET", path: (e) => `session/${id(e)}/children`, reply: childrenReply },
  "session.list": { what: "listing the sessions", method: "GET", path: (e) => `session?search=${encodeURIComponent(e.title ?? "")}`, reply: childrenReply },
  "session.summarize": { what: "compacting the session", method: "POST", path: (e) => `session/${id(e)}/summarize`, body: summarizeBody, reply: none, timeoutMs: SUMMARIZE_MS },
  "session.delete": { what: "deleting the session", method: "DELETE", path: (e) => `session/${id(e)}`, reply: none },
  "session.abort": { what: "aborting the session", method: "POST", path: (e) => `session/${id(e)}/abort`, reply: none },
  "agents.list": { what: "listing its agents", method: "GET", path: () => "agent", reply: agentsReply },
  "permission.reply": { what: "answering the permission request", method: "POST", path: (e) => `permission/${encodeURIComponent(e.requestID ?? "")}/reply`, body: permissionReplyBody, reply: none },
  "permission.list": { what: "listing the pending permission requests", method: "GET", path: () => "permission", reply: (l) => l ?? [] },
};

/** The worker's worktree effects, with what each does for its error text. */
const WORKTREE_ROUTES: Record<string, { what: string; run: (r: Remote, e: WorkerEffect) => Promise<unknown> }> = {
  "worker.worktree.create": { what: "making the worktree", run: createWorktree },
  "worker.worktree.diff": { what: "reading the worktree's changes", run: diffWorktree },
  "worker.worktree.remove": { what: "removing the worktree", run: removeWorktree },
  "worker.worktree.list": { what: "listing the worktrees", run: listWorktrees },
};

/** The reply of a response: its JSON, or null for an empty body (204, prompt_async). */
async function json(res: Response): Promise<unknown> {
  const text = await res.text();
  return text ? JSON.parse(text) : null;
}

/** Carries out one effect on e.worker; throws "worker <name>: <what>: <reason>". */
export async function performOnWorker(e: WorkerEffect, followers: WorkerFollowers): Promise<unknown> {
  const worker = e.worker!;
  const remote = e.remote;
  if (!remote?.url) throw new Error(`worker ${worker}: ${e.kind}: the effect says nowhere how to reach the worker`);
  // worker.health's reason is plain: the core writes "worker <name> cannot be reached: <reason>".
  if (e.kind === "worker.health") return health(remote);
  try {
    if (e.kind === "worker.follow") {
      followers.follow(worker, remote, e.follow);
      return null;
    }
    if (e.kind === "worker.unfollow") {
      followers.unfollow(worker);
      return null;
    }
    const worktree = WORKTREE_ROUTES[e.kind];
    if (worktree) {
      try {
        return await worktree.run(remote, e);
      } catch (err) {
        throw new Error(`${worktree.what}: ${(err as Error).message}`);
      }
    }
    const route = SESSION_ROUTES[e.kind];
    if (!route) throw new Error(`this plugin cannot carry out effect ${e.kind} on a worker`);
    try {
      const res = await request(remote, route.path(e), {
        method: route.method,
        directory: e.directory,
        body: route.body?.(e),
        timeoutMs: route.timeoutMs ?? REQUEST_MS,
      });
      return route.reply(await json(res));
    } catch (err) {
      throw new Error(`${route.what}: ${(err as Error).message}`);
    }
  } catch (err) {
    throw new Error(`worker ${worker}: ${(err as Error).message}`);
  }
}

/** The effects that name a worker but are carried out here: a remote task's tmux pane is on this machine. */
const HERE = new Set(["tmux.open", "tmux.close"]);

/** perform, with every effect that names a worker carried out on that worker instead. */
export function onWorkers(perform: Perform, followers: WorkerFollowers): Perform {
  return (e: Effect) => (e.worker && !HERE.has(e.kind) ? performOnWorker(e, followers) : perform(e));
}
