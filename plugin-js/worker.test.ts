// The plugin's core in its Worker, as index.ts starts it: a real Worker running worker.ts with the
// real core, a fake OpenCode on the main thread. Tool calls and events cross over, effects come
// back and are carried out here, the status API answers from the Worker, and a stop removes
// server.json and closes the port. Every wait is bounded.
import { afterEach, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { compile, Core } from "../bridge/core";
import type { CoreSetup } from "./local";
import { WorkerCore } from "./remote";
import { fakeOpenCode } from "./fake_opencode";
import { fakeWorker } from "./fake_worker";

const BOUND_MS = 10_000;
const workerURL = new URL("./worker.ts", import.meta.url);
const wasmURL = new URL("../dist/asyncagents.wasm", import.meta.url);
const ctx = { sessionID: "ses_parent", messageID: "msg_1", agent: "build" };

const dirs: string[] = [];
const cores: WorkerCore[] = [];
afterEach(async () => {
  // Ended, not only stopped: a Worker left running writes its history index on a timer after
  // the test, into a folder already removed.
  await Promise.all(cores.splice(0).map((c) => c.dispose(0)));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function until(what: string, cond: () => boolean): Promise<void> {
  const deadline = Date.now() + BOUND_MS;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

/** Whether a new connection to port on 127.0.0.1 is refused. */
function refused(port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const sock = connect(port, "127.0.0.1");
    sock.once("connect", () => (sock.destroy(), resolve(false)));
    sock.once("error", () => resolve(true));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}


async function start(apiEnabled: boolean, prepare?: (env: CoreSetup["env"]) => Promise<void>, wasm = wasmURL, config: CoreSetup["config"] = {}) {
  const root = mkdtempSync(join(tmpdir(), "aa-worker-"));
  dirs.push(root);
  const env = { xdgDataHome: join(root, "data"), xdgConfigHome: join(root, "config"), home: root, directory: join(root, "project"), apiPort: String(await freePort()), pid: process.pid };
  await prepare?.(env);
  const setup: CoreSetup = {
    config: { api: { token: "t0k3n", auth: "token", startedAt: Date.now() }, ...config },
    env,
    token: "t0k3n",
    startedAt: Date.now(),
    apiEnabled,
  };
  const oc = fakeOpenCode();
  const logs: string[] = [];
  const core = new WorkerCore(workerURL, wasm, setup, oc.perform, (level, message) => logs.push(`${level} ${message}`));
  cores.push(core);
  // This process's server file, where the core puts it.
  const paths = (await Core.instantiate(await compile(readFileSync(wasmURL)))).call({ op: "storage", env }).storage!;
  return { core, oc, logs, root, serverJSON: paths.serverJSON };
}

test("a launch crosses to the worker and back, and idle brings the notice to the parent", async () => {
  const { core, oc, logs } = await start(false);
  const answer = await core.callTool("asyncagents_task", { description: "Job", prompt: "do it", agent: "general" }, { ...ctx, callID: "c1" });
  expect(answer.output.split("\n")[0]).toMatch(/^task_id: bg_[0-9a-f]{22}$/);
  expect(answer.title).toMatch(/^Job \(@general\) · bg_[0-9a-f]{22}$/); // the launch line: description, agent, ID; never the prompt
  // A start first looks for the project's worktrees (worktree.list), which this test leaves aside.
  const work = () => oc.performed.filter((e) => !e.kind.startsWith("worktree."));
  await until("the child's prompt", () => work().length === 3);
  expect(work().map((e) => e.kind)).toEqual(["agents.list", "session.create", "session.promptAsync"]);

  core.feed({ type: "opencode", event: { type: "session.idle", properties: { sessionID: "ses_child" } } });
  await until("the notice", () => oc.performed.some((e) => e.kind === "session.promptAsync" && e.sessionID === "ses_parent"));
  const notice = oc.performed.find((e) => e.sessionID === "ses_parent")!;
  expect(notice.parts![1].text).toContain("<task_result>\nthe answer\n</task_result>");
  // The worker's log lines reach the main thread's logger.
  expect(logs.some((l) => l.startsWith("info asyncagents: core loaded (worker): runtime +"))).toBe(true);
});

test("bad arguments reject with the core's words, across the worker", async () => {
  const { core } = await start(false);
  await expect(core.callTool("asyncagents_output", { task_id: "" }, { ...ctx, callID: "c2" })).rejects.toThrow(
    "asyncagents_output: argument task_id is missing or empty",
  );
});

test("an abort on the main thread ends a blocked call in the worker, whenever it comes", async () => {
  const { core } = await start(false);
  const launched = await core.callTool("asyncagents_task", { description: "Slow", prompt: "p", agent: "general" }, { ...ctx, callID: "c3" });
  const taskID = launched.metadata?.taskId as string;
  const outcome = (p: Promise<unknown>) =>
    Promise.race([p.then(() => "answered", (err: Error) => err.message), Bun.sleep(BOUND_MS).then(() => "still waiting")]);
  // Aborted after the call went to the worker (the messages keep their order, so the worker has
  // the call first), and aborted before the call was made.
  const ac = new AbortController();
  const blocked = core.callTool("asyncagents_output", { task_id: taskID, block: true }, { ...ctx, callID: "c4", abort: ac.signal });
  ac.abort();
  expect(await outcome(blocked)).toMatch(/aborted while waiting for task bg_/);
  const early = core.callTool("asyncagents_output", { task_id: taskID, block: true }, { ...ctx, callID: "c4b", abort: AbortSignal.abort() });
  expect(await outcome(early)).toMatch(/aborted while waiting for task bg_/);
});

test("the status API answers from the worker, and a stop removes server.json and closes the port", async () => {
  const { core, serverJSON } = await start(true);
  await core.callTool("asyncagents_task", { description: "Listed", prompt: "p", agent: "general" }, { ...ctx, callID: "c5" });
  await until("server.json", () => existsSync(serverJSON));
  const sj = JSON.parse(readFileSync(serverJSON, "utf8"));
  const res = await fetch(`${sj.url}/v1/tasks`, { headers: { Authorization: `Bearer ${sj.token}` } });
  expect(res.status).toBe(200);
  const body = await res.json();
  expect(body.total).toBe(1);
  expect(body.tasks[0].description).toBe("Listed");

  await core.stop(500);
  expect(existsSync(serverJSON)).toBe(false);
  // No new connection is accepted (a kept-alive one would get a 503, see server.test.ts).
  expect(await refused(sj.port)).toBe(true);
});

test("dispose stops the API, refuses the calls still waiting and ends the worker", async () => {
  const { core, serverJSON } = await start(true);
  const launched = await core.callTool("asyncagents_task", { description: "Slow", prompt: "p", agent: "general" }, { ...ctx, callID: "c6" });
  await until("server.json", () => existsSync(serverJSON));
  const sj = JSON.parse(readFileSync(serverJSON, "utf8"));
  // Disposed at once: the call is refused whether or not the worker has it yet.
  const blocked = core.callTool("asyncagents_output", { task_id: launched.metadata?.taskId, block: true }, { ...ctx, callID: "c7" });
  await core.dispose(200);
  await expect(blocked).rejects.toThrow("asyncagents is unavailable: the plugin was unloaded by OpenCode");
  expect(existsSync(serverJSON)).toBe(false);
  expect(await refused(sj.port)).toBe(true);
  // The worker is gone: a later call or event finds nothing to talk to, and says so.
  core.feed({ type: "opencode", event: { type: "session.idle", properties: { sessionID: "ses_child" } } });
  await expect(core.callTool("asyncagents_list", {}, { ...ctx, callID: "c8" })).rejects.toThrow("the plugin was unloaded by OpenCode");
});

/** A day ago: the restore runs at the real time, and older tasks would be past history.maxAgeDays. */
const recent = Date.now() - 86_400_000;

/** n finished tasks as the core writes them: one `<xxh64> <json>` line each. */
function historyOf(n: number): string {
  let out = "";
  for (let i = 0; i < n; i++) {
    const task = {
      sessionID: `ses_h${i}`, parentSessionID: "ses_old", parentMessageID: "msg_old", batchId: `b${i}`, description: "old job",
      prompt: "p", agent: "general", status: "completed", startedAt: recent + i, completedAt: recent + 1_000 + i,
      result: "done", progress: { toolCalls: 1, lastTools: ["read"], lastUpdate: 0 }, resumeCount: 0, isForked: false, depth: 1,
    };
    const json = JSON.stringify({ task });
    out += `${Bun.hash.xxHash64(json).toString(16).padStart(16, "0")} ${json}\n`;
  }
  return out;
}

test("the status API binds before the history is restored, and its first answer lists all of it", async () => {
  const n = 3000;
  const { logs, serverJSON } = await start(true, async (env) => {
    // Where the history lives is the core's call: ask it, as the runtime does.
    const core = await Core.instantiate(await compile(await Bun.file(wasmURL).arrayBuffer()));
    const { history } = core.call({ op: "storage", env }).storage!;
    mkdirSync(dirname(history), { recursive: true });
    writeFileSync(history, historyOf(n));
  });
  await until("server.json", () => existsSync(serverJSON));
  const sj = JSON.parse(readFileSync(serverJSON, "utf8"));
  // Asked as soon as server.json exists: answered once the restore is done, never from a part of it.
  const res = await fetch(`${sj.url}/v1/tasks?limit=1`, { headers: { Authorization: `Bearer ${sj.token}` } });
  expect(res.status).toBe(200);
  expect((await res.json()).total).toBe(n);
  await until("the load log line", () => logs.some((l) => l.includes("core loaded")));
  const line = logs.find((l) => l.includes("core loaded"))!;
  expect(line).toContain(`restored ${n} tasks`);
  expect(line.indexOf("serving +")).toBeGreaterThan(0);
  expect(line.indexOf("serving +")).toBeLessThan(line.indexOf("restored "));
}, 20_000); // a Worker, a compile and a 3,000-task restore: bun's 5 s default is too tight on a loaded machine

test("a module that does not compile fails the tools with the reason", async () => {
  const { core } = await start(false, undefined, new URL("./worker.ts", import.meta.url));
  await expect(core.callTool("asyncagents_list", {}, { ...ctx, callID: "c9" })).rejects.toThrow("its core failed to load");
});

test("in the Worker, the start follows each configured worker, its events reach the core, and a stop ends the stream", async () => {
  const fake = fakeWorker("opencode", "w-pw");
  process.env.AA_TEST_WORKER_THREAD_PW = "w-pw";
  fake.on("GET /global/health", () => Response.json({ healthy: true, version: "1.18.33" }));
  try {
    const workers = { w1: { url: fake.url, passwordEnv: "AA_TEST_WORKER_THREAD_PW", directory: "/repo/on/w1" } };
    // The variable is set after this process started: the Worker must still see it.
    const { core } = await start(false, undefined, wasmURL, { workers });
    const stream = await fake.nthStream(1);
    // Up, fed from the Worker's stream to its core, makes the core ask the worker's health.
    stream.send({ payload: { type: "server.connected", properties: {} } });
    await until("the health asked on up", () => fake.seen.some((s) => s.path === "/global/health"));
    await core.stop(0);
    await Promise.race([stream.closed, Bun.sleep(BOUND_MS).then(() => Promise.reject(new Error("the stream outlived the stop")))]);
  } finally {
    fake.stop();
    delete process.env.AA_TEST_WORKER_THREAD_PW;
  }
});
