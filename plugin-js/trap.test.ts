// A real trap in the core (the testtraps module, wasm/testtraps.go) costs the call that trapped:
// the runtime makes a new instance, restores it from the history, and a child that was running
// still brings its notice. Three traps in a minute stop it, and every later call says so.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Runtime } from "./runtime";
import { compile, type Effect } from "../bridge/core";
import type { History } from "./history";

const module = compile(readFileSync(join(import.meta.dir, "..", "dist", "test", "asyncagents.wasm")));
const ctx = { sessionID: "ses_parent", messageID: "msg_1", agent: "build" };
const until = async (cond: () => boolean) => {
  for (let i = 0; i < 200 && !cond(); i++) await Bun.sleep(10);
  expect(cond()).toBe(true);
};

/** A history kept in memory, as the file would hold it. */
function memoryHistory(): History {
  let log = "";
  return { read: () => log, readIndex: () => "", append: (l) => void (log += l), rewrite: (c) => void (log = c), writeIndex: () => {} };
}

/** OpenCode with one child, busy until done is set. */
function openCode() {
  const oc = { performed: [] as Effect[], done: false, perform: async (e: Effect): Promise<unknown> => null };
  const user = { info: { id: "u", role: "user", time: { created: 1 } }, parts: [{ type: "text", text: "p" }] };
  const answer = { info: { id: "a", role: "assistant", finish: "stop", time: { created: 2, completed: 3 } }, parts: [{ type: "text", text: "the answer" }] };
  oc.perform = async (e) => {
    oc.performed.push(e);
    switch (e.kind) {
      case "agents.list":
        return [{ name: "build", mode: "primary" }, { name: "general", mode: "subagent" }];
      case "session.create":
        return { id: "ses_child" };
      case "session.status":
        return oc.done ? {} : { ses_child: { type: "busy" } };
      case "session.messages":
        return oc.done ? [user, answer] : [user];
    }
    return null;
  };
  return oc;
}

const trapCall = (rt: Runtime, kind: string, id: string) =>
  rt.callTool("asyncagents_cancel", { task_id: `asyncagents-test-trap:${kind}` }, { ...ctx, callID: id });

test("a trap costs the call that trapped; the new instance tracks the running child, whose notice still comes", async () => {
  const oc = openCode();
  const logs: string[] = [];
  const history = memoryHistory();
  const rt = new Runtime(module, {}, oc.perform, (_, m) => logs.push(m), { env: { home: "/nonexistent" }, open: () => history });
  const launched = await rt.callTool("asyncagents_task", { description: "Job", prompt: "p", agent: "general" }, { ...ctx, callID: "c1" });
  const taskID = launched.output.split("\n")[0].replace("task_id: ", "");
  await until(() => oc.performed.some((e) => e.kind === "session.promptAsync"));

  await expect(trapCall(rt, "memory", "t1")).rejects.toThrow(/its core failed on this call \(core trap: aa_call: .*\) and was restarted/);
  expect(logs.some((l) => l.startsWith("asyncagents: the core trapped; making a new instance: core trap: aa_call"))).toBe(true);
  // The new instance reconciled the restored task against OpenCode: it is still running.
  await until(() => oc.performed.filter((e) => e.kind === "session.messages").length === 1);
  const out = await rt.callTool("asyncagents_output", { task_id: taskID }, { ...ctx, callID: "o1" });
  expect(out.output).toContain("status: running");
  expect(oc.performed.some((e) => e.sessionID === "ses_parent")).toBe(false);

  oc.done = true;
  rt.feed({ type: "opencode", event: { type: "session.idle", properties: { sessionID: "ses_child" } } });
  await until(() => oc.performed.some((e) => e.kind === "session.promptAsync" && e.sessionID === "ses_parent"));
  const notice = oc.performed.find((e) => e.sessionID === "ses_parent")!;
  expect(notice.parts![1].text).toContain(`task_id: ${taskID}`);
  expect(notice.parts![1].text).toContain("<task_result>\nthe answer\n</task_result>");
  rt.dispose();
});

test("three traps within a minute stop the core: every later call, and the status API, say so", async () => {
  const oc = openCode();
  const logs: string[] = [];
  const rt = new Runtime(module, {}, oc.perform, (_, m) => logs.push(m), { env: { home: "/nonexistent" }, open: () => memoryHistory() });
  await expect(trapCall(rt, "panic", "t1")).rejects.toThrow(/its core failed on this call/);
  await expect(trapCall(rt, "memory", "t2")).rejects.toThrow(/its core failed on this call/);
  const third = await trapCall(rt, "panic", "t3").catch((e: Error) => e.message);
  expect(third).toStartWith("asyncagents stopped: its core failed 3 times within a minute");
  await expect(rt.callTool("asyncagents_list", {}, { ...ctx, callID: "l1" })).rejects.toThrow(third as string);
  expect(rt.feed({ type: "timer.fired", timerID: "poll" })?.message).toBe(third as string);
  const api = rt.http({ method: "GET", path: "/v1/health", headers: {}, query: "", subscribers: 0 });
  expect(api.status).toBe(503);
  expect(JSON.parse(api.body!).error).toBe(third as string);
  expect(logs).toContain(third as string);
  rt.dispose();
});

test("the shipped module does not trap on the test marker", async () => {
  const oc = openCode();
  const shipped = compile(readFileSync(join(import.meta.dir, "..", "dist", "asyncagents.wasm")));
  const rt = new Runtime(shipped, {}, oc.perform, () => {}, { env: { home: "/nonexistent" }, open: () => memoryHistory() });
  await expect(trapCall(rt, "memory", "t1")).rejects.toThrow(/asyncagents-test-trap:memory/);
  rt.dispose();
});
