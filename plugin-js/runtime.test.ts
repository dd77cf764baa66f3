// The plugin's effect loop with the real core and a fake OpenCode client: tool calls resolve from
// tool.reply, effect results flow back, a notice reaches the parent, errors reject.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Runtime } from "./runtime";
import { compile } from "../bridge/core";
import { noHistory } from "./history";
import { fakeOpenCode } from "./fake_opencode";

const module = compile(readFileSync(join(import.meta.dir, "..", "dist", "asyncagents.wasm")));


const ctx = { sessionID: "ses_parent", messageID: "msg_1", agent: "build" };
const until = async (cond: () => boolean) => {
  for (let i = 0; i < 100 && !cond(); i++) await Bun.sleep(10);
  expect(cond()).toBe(true);
};

test("a launch resolves with the task, and idle brings the notice to the parent", async () => {
  const oc = fakeOpenCode();
  const rt = new Runtime(module, {}, oc.perform, () => {}, { env: { home: "/nonexistent" }, open: () => noHistory });
  const answer = await rt.callTool("asyncagents_task", { description: "Job", prompt: "do it", agent: "general" }, { ...ctx, callID: "c1" });
  expect(answer.output.split("\n")[0]).toMatch(/^task_id: bg_[0-9a-f]{22}$/);
  expect(answer.title).toMatch(/^Job \(@general\) · bg_[0-9a-f]{22}$/); // the launch line: description, agent, ID; never the prompt
  await until(() => oc.performed.length === 3);
  expect(oc.performed.map((e) => e.kind)).toEqual(["agents.list", "session.create", "session.promptAsync"]);

  rt.feed({ type: "opencode", event: { type: "session.idle", properties: { sessionID: "ses_child" } } });
  await until(() => oc.performed.some((e) => e.kind === "session.promptAsync" && e.sessionID === "ses_parent"));
  const notice = oc.performed.find((e) => e.sessionID === "ses_parent")!;
  expect(notice.parts![0].text).toStartWith('✓ Agent "Job" finished in ');
  expect(notice.parts![1].synthetic).toBe(true);
  expect(notice.parts![1].text).toContain("<task_result>\nthe answer\n</task_result>");
  rt.dispose();
});

test("a launch answers before its session exists; output and cancel take either ID", async () => {
  let release!: () => void;
  const created = new Promise<void>((r) => (release = r));
  const oc = fakeOpenCode();
  const perform = async (e: any) => {
    if (e.kind === "session.create") await created; // OpenCode is slow to create the session
    return oc.perform(e);
  };
  const rt = new Runtime(module, {}, perform, () => {}, { env: { home: "/nonexistent" }, open: () => noHistory });
  const answer = await rt.callTool("asyncagents_task", { description: "Job", prompt: "do it", agent: "general" }, { ...ctx, callID: "c1" });
  const taskID = answer.output.split("\n")[0].replace("task_id: ", "");
  expect(taskID).toMatch(/^bg_/);
  expect(answer.metadata?.sessionId).toBeUndefined();
  expect(oc.performed.map((e) => e.kind)).toEqual(["agents.list"]); // the session is still being created
  const before = await rt.callTool("asyncagents_output", { task_id: taskID }, { ...ctx, callID: "o1" });
  expect(before.output).toContain(`task_id: ${taskID}\nagent: general`);
  expect(before.output).not.toContain("session_id:");

  release();
  await until(() => oc.performed.some((e) => e.kind === "session.promptAsync"));
  const bySession = await rt.callTool("asyncagents_output", { task_id: "ses_child" }, { ...ctx, callID: "o2" });
  expect(bySession.output).toContain(`task_id: ${taskID}\nsession_id: ses_child\n`);
  const cancelled = await rt.callTool("asyncagents_cancel", { task_id: "ses_child" }, { ...ctx, callID: "x1" });
  expect(cancelled.output).toStartWith(`Cancelled task ${taskID} "Job"`);
  rt.dispose();
});

test("a session OpenCode cannot create fails the task, after the launch answered, with a notice that says why", async () => {
  const oc = fakeOpenCode();
  const perform = async (e: any) => {
    if (e.kind === "session.create") throw new Error("creating the session: disk full");
    return oc.perform(e);
  };
  const rt = new Runtime(module, {}, perform, () => {}, { env: { home: "/nonexistent" }, open: () => noHistory });
  const answer = await rt.callTool("asyncagents_task", { description: "Doomed", prompt: "p", agent: "general" }, { ...ctx, callID: "f1" });
  expect(answer.output).toContain("status: running");
  await until(() => oc.performed.some((e) => e.kind === "session.promptAsync" && e.sessionID === "ses_parent"));
  const notice = oc.performed.find((e) => e.sessionID === "ses_parent")!;
  expect(notice.parts![0].text).toStartWith('✗ Agent "Doomed" failed in ');
  expect(notice.parts![1].text).toContain("error_type: SessionError\nerror: could not create the child session: creating the session: disk full");
  const out = await rt.callTool("asyncagents_output", { task_id: answer.metadata?.taskId }, { ...ctx, callID: "f2" });
  expect(out.output).toContain("status: error");
  rt.dispose();
});

test("bad arguments reject with the core's words and perform nothing", async () => {
  const oc = fakeOpenCode();
  const rt = new Runtime(module, {}, oc.perform, () => {}, { env: { home: "/nonexistent" }, open: () => noHistory });
  await rt.whenReady();
  const before = oc.performed.length; // the start-up agent prefetch
  await expect(rt.callTool("asyncagents_output", { task_id: "" }, { ...ctx, callID: "c2" })).rejects.toThrow(
    "asyncagents_output: argument task_id is missing or empty",
  );
  expect(oc.performed.length).toBe(before);
  rt.dispose();
});

test("a core that fails to load makes every tool call say so", async () => {
  const oc = fakeOpenCode();
  const rt = new Runtime(compile(new ArrayBuffer(8)), {}, oc.perform, () => {}, { env: { home: "/nonexistent" }, open: () => noHistory });
  await expect(rt.callTool("asyncagents_task", {}, { ...ctx, callID: "c3" })).rejects.toThrow(/core failed to load/);
  // The status API says so too, rather than "starting".
  const res = rt.http({ method: "GET", path: "/v1/tasks", query: "", headers: {}, subscribers: 0 });
  expect(res.status).toBe(503);
  expect(JSON.parse(res.body!).error).toContain("core failed to load");
});

test("a wrongly typed option is named when the core loads", async () => {
  const oc = fakeOpenCode();
  const rt = new Runtime(module, { maxResultChars: "many" as any }, oc.perform, () => {}, { env: { home: "/nonexistent" }, open: () => noHistory });
  await expect(rt.callTool("asyncagents_task", {}, { ...ctx, callID: "c4" })).rejects.toThrow(/maxResultChars/);
});

test("the history written by one runtime brings the tasks back in the next", async () => {
  let file = "";
  const mem = { ...noHistory, read: () => file, append: (l: string) => void (file += l), rewrite: (c: string) => void (file = c) };
  const oc = fakeOpenCode();
  const first = new Runtime(module, {}, oc.perform, () => {}, { env: { home: "/h" }, open: () => mem });
  await first.callTool("asyncagents_task", { description: "Kept", prompt: "p", agent: "general" }, { ...ctx, callID: "k1" });
  await until(() => oc.performed.some((e) => e.kind === "session.promptAsync"));
  first.feed({ type: "opencode", event: { type: "session.idle", properties: { sessionID: "ses_child" } } });
  await until(() => oc.performed.some((e) => e.sessionID === "ses_parent"));
  first.dispose();
  expect(file.split("\n").filter(Boolean).length).toBeGreaterThanOrEqual(2);

  const second = new Runtime(module, {}, fakeOpenCode().perform, () => {}, { env: { home: "/h" }, open: () => mem });
  const out = await second.callTool("asyncagents_output", { task_id: "ses_child" }, { ...ctx, callID: "k2" });
  expect(out.output).toContain("status: completed");
  expect(out.output).toContain("<task_result>\nthe answer\n</task_result>");
  second.dispose();
});

test("a restart reads the history from the index the last start left", async () => {
  let file = "";
  for (let i = 0; i < 300; i++) {
    const json = JSON.stringify({
      task: { sessionID: `ses_${i}`, parentSessionID: "ses_p", parentMessageID: "msg_p", batchId: "b", description: `job ${i}`, prompt: "p", agent: "general", status: "completed", startedAt: Date.now() - 86_400_000 + i, result: `answer ${i}` },
    });
    file += `${Bun.hash.xxHash64(json).toString(16).padStart(16, "0")} ${json}\n`;
  }
  let index = "";
  const mem = { ...noHistory, read: () => file, readIndex: () => index, writeIndex: (c: string) => void (index = c) };
  const lines: string[] = [];
  const log = (_level: string, line: string) => void lines.push(line);
  const first = new Runtime(module, {}, fakeOpenCode().perform, log, { env: { home: "/h" }, open: () => mem });
  await first.whenReady();
  expect(lines.join("\n")).toContain("restored 300 tasks +");
  // The index is written a little after the restore, once its answers are out.
  for (let i = 0; i < 60 && index === ""; i++) await Bun.sleep(100);
  expect(index.startsWith("asyncagents-index 2 ")).toBe(true);
  first.dispose();

  const second = new Runtime(module, {}, fakeOpenCode().perform, log, { env: { home: "/h" }, open: () => mem });
  await second.whenReady();
  expect(lines.join("\n")).toContain("restored 300 tasks (300 from the index)");
  const out = await second.callTool("asyncagents_output", { task_id: "ses_7" }, { ...ctx, sessionID: "ses_p", callID: "i1" });
  expect(out.output).toContain("answer 7");
  second.dispose();
}, 15_000);

test("an abort that comes while the core loads is honoured", async () => {
  // A running task in the history: launched by a first runtime, its lines kept.
  const lines: string[] = [];
  const oc = fakeOpenCode();
  const first = new Runtime(module, {}, oc.perform, () => {}, { env: { home: "/nonexistent" }, open: () => ({ ...noHistory, append: (l) => void lines.push(l) }) });
  const launched = await first.callTool("asyncagents_task", { description: "Job", prompt: "do it", agent: "general" }, { ...ctx, callID: "c1" });
  const taskID = launched.metadata?.taskId as string;
  await until(() => oc.performed.some((e) => e.kind === "session.promptAsync"));
  first.dispose();

  // A second runtime restores it, its core still loading when a blocking output is called and
  // aborted. OpenCode never says how the child is, so the task stays running and only the abort
  // can end the wait.
  let load!: () => void;
  const loaded = new Promise<void>((r) => (load = r));
  const hang = (e: { kind: string }) => (e.kind === "session.status" ? new Promise(() => {}) : fakeOpenCode().perform(e as any));
  const second = new Runtime(loaded.then(() => module), {}, hang, () => {}, { env: { home: "/nonexistent" }, open: () => ({ ...noHistory, read: () => lines.join("") }) });
  const ac = new AbortController();
  const blocked = second.callTool("asyncagents_output", { task_id: taskID, block: true }, { ...ctx, callID: "c2", abort: ac.signal });
  ac.abort();
  load();
  const outcome = await Promise.race([blocked.then(() => "answered", (err: Error) => err.message), Bun.sleep(5000).then(() => "still waiting 5 s later")]);
  expect(outcome).toMatch(/aborted while waiting for task bg_/);
  second.dispose();
});
