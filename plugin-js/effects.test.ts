import { expect, test } from "bun:test";
import { makeExecutor, type Client } from "./effects";
import { coreFor, SharedCore } from "./shared";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TmuxPanes } from "./tmux";

function clientWithToasts(showToast?: (opts: any) => Promise<any>): Client {
  const none = async () => ({ data: null });
  return {
    app: { agents: none },
    session: { create: none, promptAsync: none, messages: none, status: none, abort: none, get: none, children: none, list: none, delete: none, summarize: none },
    tui: showToast ? { showToast } : undefined,
  };
}

test("tui.toast shows the core's toast in OpenCode's TUI", async () => {
  const shown: any[] = [];
  const perform = makeExecutor(
    clientWithToasts(async (opts) => (shown.push(opts), { data: true })),
    "/work/p",
  );
  await perform({ id: 0, kind: "tui.toast", title: 'Agent "Survey" finished', message: "in 4.2s", variant: "success" });
  expect(shown).toEqual([{ body: { title: 'Agent "Survey" finished', message: "in 4.2s", variant: "success" }, query: { directory: "/work/p" } }]);
});

test("a toast that fails, or a client without a TUI, is ignored", async () => {
  const failing = makeExecutor(
    clientWithToasts(async () => {
      throw new Error("no TUI");
    }),
    "/work/p",
  );
  expect(await failing({ id: 0, kind: "tui.toast", message: "m", variant: "error" })).toBeNull();
  const without = makeExecutor(clientWithToasts(), "/work/p");
  expect(await without({ id: 0, kind: "tui.toast", message: "m", variant: "info" })).toBeNull();
});

test("a session effect that names a directory (an isolated task's worktree) is sent to that instance", async () => {
  const seen: any[] = [];
  const record = async (opts: any) => (seen.push(opts.query), { data: { id: "ses_1" } });
  const client: Client = {
    app: { agents: record },
    session: { create: record, promptAsync: record, messages: record, status: record, abort: record, get: record, children: record, list: record, delete: record, summarize: record },
    _client: { post: record, get: record },
  };
  const perform = makeExecutor(client, "/work/p");
  const wt = "/data/worktrees/k/bg_1";
  for (const kind of ["session.create", "session.promptAsync", "session.messages", "session.status", "session.abort", "session.get", "session.children", "session.delete", "session.summarize", "permission.reply", "permission.list"]) {
    await perform({ id: 1, kind, sessionID: "ses_1", directory: wt } as any);
  }
  expect(seen).toEqual(Array(11).fill({ directory: wt }));
  await perform({ id: 2, kind: "session.status" });
  expect(seen[11]).toEqual({ directory: "/work/p" });
  await perform({ id: 3, kind: "session.list", title: "t", directory: wt } as any);
  expect(seen[12]).toEqual({ directory: wt, search: "t" });
});

test("a session effect naming a worktree records it as the plugin's project's before OpenCode hears of it", async () => {
  const none = async () => ({ data: { id: "ses_1" } });
  const client: Client = { app: { agents: none }, session: { create: none, promptAsync: none, messages: none, status: none, abort: none, get: none, children: none, list: none, delete: none, summarize: none } };
  let started = 0;
  const start = () => (started++, new SharedCore({ callTool: async () => ({ output: "" }), feed() {}, dispose: async () => {} }, {} as TmuxPanes));
  const project = coreFor("/p/effects-owner", start);
  await makeExecutor(client, "/p/effects-owner")({ id: 1, kind: "session.create", directory: "/data/worktrees/k/bg_9" } as any);
  const wt = coreFor("/data/worktrees/k/bg_9", start);
  expect(wt.shared).toBe(project.shared);
  expect(started).toBe(1);
});

test("a worktree effect without a directory works on the plugin's own project", async () => {
  const none = async () => ({ data: null });
  const client: Client = { app: { agents: none }, session: { create: none, promptAsync: none, messages: none, status: none, abort: none, get: none, children: none, list: none, delete: none, summarize: none } };
  const dir = mkdtempSync(join(tmpdir(), "aa-effects-"));
  try {
    await expect(makeExecutor(client, dir)({ id: 1, kind: "worktree.inspect" })).rejects.toThrow(`not a git repository: ${dir}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("session.create names the child's task in its metadata; session.children and session.list reply each session's ID, parent and metadata", async () => {
  const calls: any[] = [];
  const none = async () => ({ data: null });
  const child = { id: "ses_c", title: "t", parentID: "ses_p", metadata: { asyncagents: { task: "bg_1" } }, summary: { diffs: ["big"] } };
  const client: Client = {
    app: { agents: none },
    session: {
      create: async (opts: any) => (calls.push(["create", opts]), { data: { id: "ses_c" } }),
      children: async (opts: any) => (calls.push(["children", opts]), { data: [child, { id: "ses_other", title: "u" }] }),
      list: async (opts: any) => (calls.push(["list", opts]), { data: [child] }),
      promptAsync: none, messages: none, status: none, abort: none, get: none, delete: none, summarize: none,
    },
  };
  const perform = makeExecutor(client, "/work/p");
  const metadata = { asyncagents: { task: "bg_1" } };
  expect(await perform({ id: 1, kind: "session.create", parentID: "ses_p", title: "t", metadata } as any)).toEqual({ id: "ses_c" });
  expect(await perform({ id: 2, kind: "session.children", sessionID: "ses_p" } as any)).toEqual([
    { id: "ses_c", parentID: "ses_p", metadata },
    { id: "ses_other", parentID: undefined, metadata: undefined },
  ]);
  expect(await perform({ id: 3, kind: "session.list", title: "t (@general subagent)" } as any)).toEqual([{ id: "ses_c", parentID: "ses_p", metadata }]);
  expect(calls).toEqual([
    ["create", { body: { parentID: "ses_p", title: "t", permission: undefined, metadata }, query: { directory: "/work/p" } }],
    ["children", { path: { id: "ses_p" }, query: { directory: "/work/p" } }],
    ["list", { query: { directory: "/work/p", search: "t (@general subagent)" } }],
  ]);
  const failing = makeExecutor({ ...client, session: { ...client.session, children: async () => ({ error: { name: "NotFoundError", data: { message: "Session not found" } } }) } }, "/work/p");
  await expect(failing({ id: 3, kind: "session.children", sessionID: "ses_gone" } as any)).rejects.toThrow("reading the session's children: Session not found");
});
