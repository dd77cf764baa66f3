// Carries out the core's effects that talk to OpenCode, through the plugin's v1 SDK client. Each
// function returns what the core expects back in effect.done, or throws with OpenCode's words.
// No decisions here: the core chose what to call and with what.

import type { Effect } from "../bridge/core";
import type { TmuxPanes } from "./tmux";
import { WORKTREE_EFFECTS, type WorktreeEffect } from "./worktree";
import { ownWorktree } from "./shared";
import { IMPORT_EFFECTS } from "./worktree_import";

// The slice of the v1 SDK client this file uses. Typed loosely on purpose: the server accepts
// fields (session permission) that the v1 types lack.
export interface Client {
  app: { agents(opts: any): Promise<Result> };
  session: {
    create(opts: any): Promise<Result>;
    promptAsync(opts: any): Promise<Result>;
    messages(opts: any): Promise<Result>;
    status(opts: any): Promise<Result>;
    abort(opts: any): Promise<Result>;
    get(opts: any): Promise<Result>;
    children(opts: any): Promise<Result>;
    list(opts: any): Promise<Result>;
    delete(opts: any): Promise<Result>;
    summarize(opts: any): Promise<Result>;
  };
  /** The SDK's own HTTP client, for a route the v1 SDK does not name. */
  _client?: { post(opts: any): Promise<Result>; get(opts: any): Promise<Result> };
  /** Absent in a client without a TUI API: toasts are then not shown. */
  tui?: { showToast(opts: any): Promise<Result> };
}
interface Result {
  data?: any;
  error?: any;
  response?: Response;
}

/** The effect's model as OpenCode's API takes it: the core split it (Effect.providerID, modelID). */
function modelRef(e: Effect): { providerID: string; modelID: string } | undefined {
  return e.providerID && e.modelID ? { providerID: e.providerID, modelID: e.modelID } : undefined;
}

export type Perform = (e: Effect) => Promise<unknown>;

/** session.create's body: the child under its parent, with its permission rules and the metadata naming its task. */
export function createBody(e: Effect) {
  return { parentID: e.parentID, title: e.title, permission: e.permission, metadata: e.metadata };
}

/** session.children's and session.list's reply: each session's ID, parent and metadata (the rest is not needed). */
export function childrenReply(list: any): { id: string; parentID?: string; metadata?: unknown }[] {
  return (Array.isArray(list) ? list : []).map((s) => ({ id: s?.id, parentID: s?.parentID, metadata: s?.metadata }));
}

/** session.promptAsync's body, as OpenCode's API takes it. */
export function promptBody(e: Effect) {
  return { agent: e.agent || undefined, parts: e.parts, tools: e.tools, noReply: e.noReply || undefined, model: modelRef(e) };
}

/** session.summarize's body: compacts with the attempt's model, then OpenCode continues on its own. */
export function summarizeBody(e: Effect) {
  return { ...modelRef(e), auto: true };
}

/** agents.list's reply, from OpenCode's agent list (GET /agent): what the core reads of each. */
export function agentsReply(agents: any[]) {
  return (agents ?? []).map((a) => ({ name: a.name, mode: a.mode, description: a.description, permission: Array.isArray(a.permission) ? a.permission : undefined, model: a.model?.providerID && a.model?.modelID ? { providerID: a.model.providerID, modelID: a.model.modelID } : undefined }));
}

/** permission.reply's body (OpenCode 1.18's /permission/{requestID}/reply). */
export function permissionReplyBody(e: Effect) {
  return { reply: e.answer, message: e.message || undefined };
}

/** tui.showToast's body, as OpenCode's API takes it. */
export function toastBody(e: Effect) {
  return { title: e.title || undefined, message: e.message ?? "", variant: e.variant || "info" };
}

function unwrap(what: string, r: Result): any {
  if (r.error !== undefined && r.error !== null) {
    const e = r.error;
    const msg = e?.data?.message ?? e?.message ?? e?.name ?? JSON.stringify(e);
    throw new Error(`${what}: ${msg}`);
  }
  return r.data;
}

export function makeExecutor(client: Client, directory: string, tmux?: TmuxPanes) {
  return async function perform(e: Effect): Promise<unknown> {
    // An isolated task's session lives in its worktree's instance: every request about it names
    // that directory (OpenCode's ?directory=); empty means the plugin's own.
    const query = { directory: (e as { directory?: string }).directory || directory };
    const worktree = WORKTREE_EFFECTS[e.kind] ?? IMPORT_EFFECTS[e.kind];
    if (worktree) {
      // A worktree effect's directory is the project; empty means the plugin's own.
      const w = { ...(e as unknown as WorktreeEffect), directory: query.directory };
      if (w.kind === "worktree.create" && w.path) ownWorktree(w.path, directory);
      return worktree(w);
    }
    // Recorded before the request that may start the worktree's instance, so that the plugin
    // OpenCode loads there joins this core (shared.ts).
    if (query.directory !== directory) ownWorktree(query.directory, directory);
    switch (e.kind) {
      case "agents.list": {
        return agentsReply(unwrap("listing agents", await client.app.agents({ query })));
      }
      case "session.create": {
        const s = unwrap("creating the session", await client.session.create({ body: createBody(e), query }));
        return { id: s.id };
      }
      case "session.promptAsync": {
        unwrap("prompting the session", await client.session.promptAsync({ path: { id: e.sessionID }, body: promptBody(e), query }));
        return null;
      }
      case "session.messages":
        return unwrap("reading the messages", await client.session.messages({ path: { id: e.sessionID }, query: e.limit ? { ...query, limit: e.limit } : query }));
      case "session.status":
        return unwrap("reading session status", await client.session.status({ query })) ?? {};
      case "session.get": {
        const s = unwrap("reading the session", await client.session.get({ path: { id: e.sessionID }, query }));
        return { id: s?.id, parentID: s?.parentID };
      }
      case "session.children":
        return childrenReply(unwrap("reading the session's children", await client.session.children({ path: { id: e.sessionID }, query })));
      case "session.list":
        return childrenReply(unwrap("listing the sessions", await client.session.list({ query: { ...query, search: e.title } })));
      case "session.summarize":
        // Compacts the session with the attempt's model; OpenCode answers once it is done and, with
        // auto, then continues the session on its own: that continuation is the retry.
        unwrap("compacting the session", await client.session.summarize({ path: { id: e.sessionID }, body: summarizeBody(e), query }));
        return null;
      case "session.delete":
        unwrap("deleting the session", await client.session.delete({ path: { id: e.sessionID }, query }));
        return null;
      case "session.abort":
        unwrap("aborting the session", await client.session.abort({ path: { id: e.sessionID }, query }));
        return null;
      // OpenCode 1.18's route; the v1 SDK names only the older one, so through its raw client.
      case "permission.reply":
        unwrap(
          "answering the permission request",
          await client._client!.post({ url: "/permission/{requestID}/reply", path: { requestID: e.requestID }, query, body: permissionReplyBody(e) }),
        );
        return null;
      case "permission.list":
        return unwrap("listing the pending permission requests", await client._client!.get({ url: "/permission", query })) ?? [];
      // No reply, and a toast that fails (no TUI attached to this server) is ignored.
      case "tui.toast":
        await client.tui?.showToast({ body: toastBody(e), query }).catch(() => undefined);
        return null;
      // No reply: TmuxPanes logs its failures and never throws.
      case "tmux.open":
        return tmux?.open(e.sessionID!, e.title, { worker: e.worker, remote: e.remote }).then(() => null) ?? null;
      case "tmux.close":
        return tmux?.close(e.sessionID!).then(() => null) ?? null;
    }
    throw new Error(`this plugin cannot carry out effect ${e.kind}`);
  };
}
