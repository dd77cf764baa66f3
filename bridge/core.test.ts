import { expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Core, CoreError, CoreTrap, compile } from "./core";

const wasmPath = process.env.ASYNCAGENTS_WASM ?? join(import.meta.dir, "..", "dist", "asyncagents.wasm");
const module = await compile(readFileSync(wasmPath));

test("init lists the tools and the events the core wants", async () => {
  const core = await Core.instantiate(module);
  const res = core.init({ pollIntervalMs: 700 });
  expect(res.abi).toBe(1);
  expect(res.config?.pollIntervalMs).toBe(700);
  expect(res.tools?.map((t) => t.name)).toEqual([
    "asyncagents_task",
    "asyncagents_output",
    "asyncagents_cancel",
    "asyncagents_list",
    "asyncagents_message",
    "asyncagents_merge",
    "asyncagents_clear",
  ]);
  expect(res.subscribe).toContain("session.idle");
  expect(res.subscribe).toContain("permission.asked");
});

test("a panic in the core is an error, and the instance keeps working", async () => {
  const core = await Core.instantiate(module);
  core.init();
  expect(() => core.call({ op: "panic" })).toThrow(CoreError);
  expect(() => core.call({ op: "panic" })).toThrow(/core panic/);
  expect(core.tasks()).toEqual([]);
});

test("a malformed envelope is an error naming the problem", async () => {
  const core = await Core.instantiate(module);
  const res = JSON.parse(core.callRaw("{not json"));
  expect(res.ok).toBe(false);
  expect(res.error).toContain("bad request envelope");
});

test("large requests and responses cross the boundary intact", async () => {
  const core = await Core.instantiate(module);
  core.init();
  const big = "x".repeat(2_000_000);
  const effects = core.step(1, {
    type: "tool.call",
    callID: "c",
    tool: "asyncagents_output",
    sessionID: "s",
    args: { task_id: big },
  });
  expect(effects).toHaveLength(1);
  expect(effects[0].error).toContain(big.slice(0, 1000));
  expect(effects[0].error!.length).toBeGreaterThan(2_000_000);
});

test("a history restores the same from the file's bytes as from text, non-ASCII included", async () => {
  const line = (task: Record<string, unknown>) => {
    const json = JSON.stringify({ task });
    return `${Bun.hash.xxHash64(json).toString(16).padStart(16, "0")} ${json}\n`;
  };
  const text =
    line({ sessionID: "ses_a", description: "résumé ✓", status: "completed", startedAt: 1, result: "fin 日本" }) +
    line({ sessionID: "ses_b", description: "plain", status: "completed", startedAt: 2, result: "ok" }) +
    "0badc0de {torn\n";
  const fromText = await Core.instantiate(module);
  fromText.init();
  const fromBytes = await Core.instantiate(module);
  fromBytes.init();
  const a = fromText.call({ op: "restore", now: 10, history: text });
  const b = fromBytes.call({ op: "restore", now: 10, history: new TextEncoder().encode(text) });
  expect(b.restore).toEqual(a.restore!);
  expect(b.restore?.restored).toBe(2);
  expect(b.restore?.corrupt).toBe(1);
  expect(fromBytes.tasks()).toEqual(fromText.tasks());
  expect(fromBytes.tasks().map((t) => t.description)).toEqual(["résumé ✓", "plain"]);
});

test("a history and its index read from their files restore as given in the call", async () => {
  const line = (task: Record<string, unknown>) => {
    const json = JSON.stringify({ task });
    return `${Bun.hash.xxHash64(json).toString(16).padStart(16, "0")} ${json}\n`;
  };
  let text = "";
  for (let i = 0; i < 300; i++) text += line({ sessionID: `ses_${i}`, description: `résumé ${i}`, status: "completed", startedAt: i + 1, result: `fin ${i}` });
  const first = await Core.instantiate(module);
  first.init();
  first.call({ op: "restore", now: 10, history: text });
  const written = first.step(20, { type: "timer.fired", timerID: "history.index" }).find((e) => e.kind === "history.index");
  expect(written?.content?.startsWith("asyncagents-index 2 ")).toBe(true);

  const dir = mkdtempSync(join(tmpdir(), "aa-bridge-"));
  try {
    const files = { history: join(dir, "h.log"), index: join(dir, "h.idx") };
    writeFileSync(files.history, text + line({ sessionID: "ses_tail", description: "après", status: "completed", startedAt: 999, result: "tail" }));
    writeFileSync(files.index, written!.content!);
    const viaCall = await Core.instantiate(module);
    viaCall.init();
    const a = viaCall.call({ op: "restore", now: 30, history: readFileSync(files.history), index: readFileSync(files.index) });
    const viaFiles = await Core.instantiate(module);
    viaFiles.init();
    const b = viaFiles.callWithFiles({ op: "restore", now: 30 }, files);
    expect(a.restore).toEqual({ restored: 301, corrupt: 0, indexed: 300 });
    expect(b.restore).toEqual(a.restore!);
    expect(viaFiles.tasks()).toEqual(viaCall.tasks());

    // An index that opens but cannot be read (here a directory) is none: the history alone.
    const unreadable = await Core.instantiate(module);
    unreadable.init();
    expect(unreadable.callWithFiles({ op: "restore", now: 30 }, { ...files, index: dir }).restore).toEqual({ restored: 301, corrupt: 0 });
    expect(unreadable.tasks()).toEqual(viaCall.tasks());

    // No index file: the history alone. No files at all: nothing, and no error.
    rmSync(files.index);
    const noIndex = await Core.instantiate(module);
    noIndex.init();
    expect(noIndex.callWithFiles({ op: "restore", now: 30 }, files).restore).toEqual({ restored: 301, corrupt: 0 });
    const none = await Core.instantiate(module);
    none.init();
    expect(none.callWithFiles({ op: "restore", now: 30 }, { history: join(dir, "missing.log"), index: join(dir, "missing.idx") }).restore).toEqual({ restored: 0, corrupt: 0 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// Go's collector did not finish a cycle on its own between calls under Bun: each event-stream
// snapshot left its garbage for good (2 GB and a broken instance after 35 snapshots of 10,000
// tasks). The module now collects at call boundaries (wasm/main.go); memory must stay flat.
test("memory stays bounded however many large answers the core gives", async () => {
  const core = await Core.instantiate(module);
  core.init({ api: { auth: "none" } });
  let history = "";
  for (let i = 0; i < 10_000; i++) {
    const json = JSON.stringify({
      task: { sessionID: `ses_${i}`, parentSessionID: "ses_p", description: "survey a module", prompt: "Look. ".repeat(30), status: "completed", startedAt: i + 1, result: "Found. ".repeat(60) },
    });
    history += `${Bun.hash.xxHash64(json).toString(16).padStart(16, "0")} ${json}\n`;
  }
  expect(core.call({ op: "restore", now: 50_000, history }).restore?.restored).toBe(10_000);
  const req = { method: "GET", path: "/v1/events", query: "", headers: { host: "127.0.0.1" }, subscribers: 0 };
  let after5 = 0;
  for (let i = 0; i < 30; i++) {
    const res = core.call({ op: "http", now: 60_000, http: req }) as unknown as { http: { body: string } };
    expect(res.http.body.length).toBeGreaterThan(8 << 20);
    if (i === 4) after5 = core.memoryBytes();
  }
  expect(core.memoryBytes()).toBeLessThanOrEqual(after5 + (32 << 20));
}, 60_000);

test("a trap makes the instance throw CoreTrap, on that call and every later one", async () => {
  const traps = await compile(readFileSync(join(import.meta.dir, "..", "dist", "test", "asyncagents.wasm")));
  const core = Core.instantiateSync(traps, () => {});
  core.init();
  const call = { type: "tool.call", callID: "c", tool: "asyncagents_cancel", sessionID: "s", messageID: "m", agent: "build", args: { task_id: "asyncagents-test-trap:memory" } } as const;
  expect(() => core.step(1, call)).toThrow(CoreTrap);
  expect(() => core.tasks()).toThrow(CoreTrap);
});
