// A history that cannot be written (a full disk): the runtime keeps the first failed write for the
// core's history.sync, so the notice goes once, with the core's warning, and /v1/health says so;
// once writes work again the core's retry rewrites the log.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Runtime } from "./runtime";
import { compile } from "../bridge/core";
import type { History } from "./history";
import { fakeOpenCode } from "./fake_opencode";

const module = compile(readFileSync(join(import.meta.dir, "..", "dist", "asyncagents.wasm")));
const ctx = { sessionID: "ses_parent", messageID: "msg_1", agent: "build" };
const until = async (cond: () => boolean) => {
  for (let i = 0; i < 300 && !cond(); i++) await Bun.sleep(10);
  expect(cond()).toBe(true);
};

test("a full disk: the notice goes once with a warning, the health is degraded, and nothing is lost", async () => {
  let full = true;
  const written: string[] = [];
  let rewritten = "";
  const enospc = () => {
    if (full) throw new Error("ENOSPC: no space left on device, write");
  };
  const history: History = {
    read: () => "",
    readIndex: () => "",
    append: (line) => (enospc(), written.push(line)),
    rewrite: (content) => (enospc(), (rewritten = content)),
    writeIndex: () => {},
  };
  const oc = fakeOpenCode();
  const logs: string[] = [];
  const rt = new Runtime(module, {}, oc.perform, (level, message) => logs.push(`${level}: ${message}`), { env: { home: "/nonexistent" }, open: () => history });
  const answer = await rt.callTool("asyncagents_task", { description: "Job", prompt: "do it", agent: "general" }, { ...ctx, callID: "c1" });
  const taskID = answer.metadata?.taskId as string;
  await until(() => oc.performed.length === 3);
  rt.feed({ type: "opencode", event: { type: "session.idle", properties: { sessionID: "ses_child" } } });
  await until(() => oc.performed.some((e) => e.kind === "session.promptAsync" && e.sessionID === "ses_parent"));
  const notices = oc.performed.filter((e) => e.kind === "session.promptAsync" && e.sessionID === "ses_parent");
  expect(notices).toHaveLength(1);
  expect(notices[0].parts!.map((p) => p.text).join("\n")).toContain("could not write its task history (ENOSPC");
  const health = JSON.parse(rt.http({ method: "GET", path: "/v1/health", query: "", headers: { host: "127.0.0.1:5165" }, subscribers: 0 }).body);
  expect(health.status).toBe("degraded");
  expect(health.reason).toContain("ENOSPC");
  expect(oc.performed.filter((e) => e.kind === "tui.toast" && (e.title ?? "").includes("task history"))).toHaveLength(1);
  expect(written).toHaveLength(0);

  full = false;
  await until(() => rewritten.includes(taskID)); // the retry's rewrite, 2 s after the failure
  expect(rewritten).toContain('"status":"completed"');
  await until(() => JSON.parse(rt.http({ method: "GET", path: "/v1/health", query: "", headers: { host: "127.0.0.1:5165" }, subscribers: 0 }).body).status === "ok");
  expect(oc.performed.filter((e) => e.kind === "session.promptAsync" && e.sessionID === "ses_parent")).toHaveLength(1);
  rt.dispose();
});
