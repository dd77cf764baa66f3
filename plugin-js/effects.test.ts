import { expect, test } from "bun:test";
import { makeExecutor, type Client } from "./effects";

function clientWithToasts(showToast?: (opts: any) => Promise<any>): Client {
  const none = async () => ({ data: null });
  return {
    app: { agents: none },
    session: { create: none, promptAsync: none, messages: none, status: none, abort: none, get: none, delete: none, summarize: none },
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
