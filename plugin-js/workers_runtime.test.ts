// The plugin's loop with the real core, wired as local.ts wires it (onWorkers over the local
// effects, the followers feeding the core), against a fake worker: the start follows the worker,
// a task placed on it is created and prompted there, its idle event from the worker's stream ends
// it, its messages are read there, and the notice reaches the parent on the local OpenCode.

import { afterEach, beforeEach, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { compile } from "../bridge/core";
import { fakeOpenCode } from "./fake_opencode";
import { fakeWorker, frame, until, type FakeWorker } from "./fake_worker";
import { noHistory } from "./history";
import { sessionMessages } from "./local";
import { Runtime } from "./runtime";
import { onWorkers } from "./workers_effects";
import { WorkerFollowers } from "./workers_follow";

const module = compile(readFileSync(join(import.meta.dir, "..", "dist", "asyncagents.wasm")));
// The module built with the test traps (wasm/testtraps.go): a marked call makes it trap.
const trapModule = compile(readFileSync(join(import.meta.dir, "..", "dist", "test", "asyncagents.wasm")));
const PW = "s3cret-pw";
const DIR = "/repo/on/w1";
const ctx = { sessionID: "ses_parent", messageID: "msg_1", agent: "build" };
let fake: FakeWorker;
let followers: WorkerFollowers | undefined;
let rt: Runtime | undefined;

beforeEach(() => {
  fake = fakeWorker("opencode", PW);
  process.env.AA_TEST_RT_W1_PASSWORD = PW;
  fake.on("GET /global/health", () => Response.json({ healthy: true, version: "1.18.33" }));
  fake.on("POST /session", () => Response.json({ id: "ses_remote" }));
  fake.on("POST /session/ses_remote/prompt_async", () => new Response(null, { status: 204 }));
  fake.on("GET /session/status", () => Response.json({}));
  fake.on("GET /session/ses_remote/message", () =>
    Response.json([
      { info: { id: "u", role: "user" }, parts: [{ type: "text", text: "p" }] },
      { info: { id: "a", role: "assistant", finish: "stop", time: { created: 1, completed: 2 } }, parts: [{ type: "text", text: "the remote answer" }] },
    ]),
  );
});

afterEach(() => {
  rt?.dispose();
  followers?.stop();
  fake.stop();
  delete process.env.AA_TEST_RT_W1_PASSWORD;
});

test("a task on a worker runs there and reports to the parent as a local one does, naming the worker", async () => {
  const oc = fakeOpenCode();
  followers = new WorkerFollowers((ev) => void rt!.feed(ev));
  const config = { api: { token: "tok" }, workers: { w1: { url: fake.url, passwordEnv: "AA_TEST_RT_W1_PASSWORD", directory: DIR } } };
  rt = new Runtime(module, config, onWorkers(oc.perform, followers), () => {}, { env: { home: "/nonexistent" }, open: () => noHistory });
  // The start follows the worker: its stream opens, and its server.connected makes it up.
  const stream = await fake.nthStream(1);
  stream.send({ payload: { type: "server.connected", properties: {} } });
  await until("the health asked on up", () => fake.seen.some((s) => s.path === "/global/health"));

  const answer = await rt.callTool("asyncagents_task", { description: "Far job", prompt: "do it", agent: "general", worker: "w1" }, { ...ctx, callID: "c1" });
  expect(answer.output).toContain("w1");
  await until("the prompt on the worker", () => fake.seen.some((s) => s.path === "/session/ses_remote/prompt_async"));
  const create = fake.seen.find((s) => s.method === "POST" && s.path === "/session")!;
  expect(create.directory).toBe(DIR);
  expect(create.auth).toBe(`Basic ${Buffer.from(`opencode:${PW}`).toString("base64")}`);
  // Nothing of the task's session went to the local OpenCode.
  expect(oc.performed.filter((e) => e.kind.startsWith("session."))).toEqual([]);

  stream.send(frame("session.idle", { sessionID: "ses_remote" }, DIR));
  await until("the notice", () => oc.performed.some((e) => e.kind === "session.promptAsync" && e.sessionID === "ses_parent"));
  expect(fake.seen.some((s) => s.path === "/session/ses_remote/message" && s.directory === DIR)).toBe(true);
  const notice = oc.performed.find((e) => e.sessionID === "ses_parent")!;
  expect(notice.parts![0].text).toStartWith('✓ Agent "Far job" finished in ');
  expect(notice.parts!.map((p) => p.text).join("\n")).toContain("the remote answer");
  expect(notice.parts!.map((p) => p.text).join("\n")).toContain("w1");
  expect(JSON.stringify(oc.performed)).not.toContain(PW);

  // The status API's logs of that task are read on the worker, as local.ts wires them.
  const taskID = answer.output.split("\n")[0].replace("task_id: ", "");
  const res = rt.http({ method: "GET", path: `/v1/tasks/${taskID}/logs`, query: "", headers: { host: "127.0.0.1:5165", authorization: "Bearer tok" }, subscribers: 0 });
  expect([res.logs, res.worker, res.directory]).toEqual(["ses_remote", "w1", DIR]);
  const reads = fake.seen.length;
  const logs = (await sessionMessages((e) => rt!.run(e))(res.logs!, res)) as any[];
  expect(logs.at(-1).parts[0].text).toBe("the remote answer");
  expect(fake.seen.slice(reads).map((s) => [s.path, s.directory])).toEqual([["/session/ses_remote/message", DIR]]);
}, 20_000);

test("a worker whose password is wrong fails a launch placed on it, naming the worker and the 401", async () => {
  fake.password = "another";
  const oc = fakeOpenCode();
  followers = new WorkerFollowers((ev) => void rt!.feed(ev));
  const config = { workers: { w1: { url: fake.url, passwordEnv: "AA_TEST_RT_W1_PASSWORD", directory: DIR } } };
  rt = new Runtime(module, config, onWorkers(oc.perform, followers), () => {}, { env: { home: "/nonexistent" }, open: () => noHistory });
  const failed = await rt.callTool("asyncagents_task", { description: "Far job", prompt: "do it", agent: "general", worker: "w1" }, { ...ctx, callID: "c1" }).then(
    (a) => a.output,
    (e: Error) => e.message,
  );
  expect(failed).toBe("asyncagents_task: worker w1 cannot be reached: wrong username or password (401); no task was created");
  expect(fake.seen.some((s) => s.path === "/session")).toBe(false);
}, 20_000);

test("after a trap the new core hears that the worker's stream is up, as the first one did", async () => {
  const oc = fakeOpenCode();
  followers = new WorkerFollowers((ev) => void rt!.feed(ev));
  const config = { api: { token: "tok" }, workers: { w1: { url: fake.url, passwordEnv: "AA_TEST_RT_W1_PASSWORD", directory: DIR } } };
  rt = new Runtime(trapModule, config, onWorkers(oc.perform, followers), () => {}, { env: { home: "/nonexistent" }, open: () => noHistory });
  const stream = await fake.nthStream(1);
  stream.send({ payload: { type: "server.connected", properties: {} } });
  const workers = () => rt!.http({ method: "GET", path: "/v1/workers", query: "", headers: { host: "127.0.0.1:5165", authorization: "Bearer tok" }, subscribers: 0 });
  const state = () => JSON.parse(workers().body ?? "{}").workers?.[0]?.state;
  await until("up", () => state() === "up");

  const trapped = await rt.callTool("asyncagents_cancel", { task_id: "asyncagents-test-trap:memory" }, { ...ctx, callID: "t1" }).then(
    () => "",
    (e: Error) => e.message,
  );
  expect(trapped).toContain("restarted");
  // The stream stayed open through the trap: the new instance learns its state from the
  // follower, not from a reconnect that may never come.
  await until("up in the new core", () => state() === "up");
  expect(fake.seen.filter((s) => s.path === "/global/event").length).toBe(1);
}, 20_000);
