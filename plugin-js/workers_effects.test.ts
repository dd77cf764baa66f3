// The effects of a task on a worker, against a fake `opencode serve` with basic auth: each goes
// to the worker (never to the local OpenCode) with the same body as the local executor's, the
// Authorization header, ?directory=, and the local reply's shape; every failure names the worker
// in plain words and never holds the password.

import { expect, test } from "bun:test";
import type { Effect } from "../bridge/core";
import { createBody, permissionReplyBody, promptBody, summarizeBody } from "./effects";
import { fakeWorker, workerPerTest } from "./fake_worker";
import { onWorkers, performOnWorker, type WorkerEffect } from "./workers_effects";

const PW = "s3cret-pw";
const w = workerPerTest("AA_TEST_W1_PASSWORD", PW);
const on = (e: Partial<WorkerEffect>) => w.on({ directory: "/repo/on/w1", ...e });

/** An error's text, asserted never to hold the password. */
async function failure(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => new Error("it did not fail"),
    (e: Error) => e,
  );
  expect(err.message).not.toContain(PW);
  expect(err.message).not.toContain(Buffer.from(`opencode:${PW}`).toString("base64"));
  return err.message;
}

test("every session effect of a remote task goes to its worker with basic auth, ?directory= and the local executor's body, and replies as the local one", async () => {
  w.fake.on("POST /session", () => Response.json({ id: "ses_remote", title: "t" }));
  w.fake.on("POST /session/ses_remote/prompt_async", () => new Response(null, { status: 204 }));
  const limits: (string | null)[] = [];
  w.fake.on("GET /session/ses_remote/message", (req) => {
    const q = new URL(req.url).searchParams;
    limits.push(`${q.get("limit")} in ${q.get("directory")}`);
    return Response.json([{ info: { id: "m1", role: "assistant" }, parts: [] }]);
  });
  w.fake.on("GET /session/status", () => Response.json({ ses_remote: { type: "busy" } }));
  w.fake.on("GET /session/ses_remote", () => Response.json({ id: "ses_remote", title: "t", parentID: "ses_above" }));
  w.fake.on("GET /session/ses_parent/children", () => Response.json([{ id: "ses_remote", title: "t", parentID: "ses_parent", metadata: { asyncagents: { task: "bg_1" } } }]));
  const searched: (string | null)[] = [];
  w.fake.on("GET /session", (req) => {
    searched.push(new URL(req.url).searchParams.get("search"));
    return Response.json([{ id: "ses_remote", title: "t (@general subagent)", parentID: "ses_parent", metadata: { asyncagents: { task: "bg_1" } } }]);
  });
  for (const r of ["POST /session/ses_remote/summarize", "DELETE /session/ses_remote", "POST /session/ses_remote/abort", "POST /permission/per_1/reply"]) w.fake.on(r, () => Response.json(true));
  const create: Partial<Effect> = { kind: "session.create", parentID: "ses_parent", title: "t", permission: [{ permission: "edit", pattern: "*", action: "deny" }], metadata: { asyncagents: { task: "bg_1" } } };
  const prompt: Partial<Effect> = { kind: "session.promptAsync", sessionID: "ses_remote", agent: "general", parts: [{ type: "text", text: "do it" }] as any, providerID: "mock", modelID: "m" };
  const summarize: Partial<Effect> = { kind: "session.summarize", sessionID: "ses_remote", providerID: "mock", modelID: "m" };
  const permit: Partial<Effect> = { kind: "permission.reply", requestID: "per_1", answer: "once" };
  const asked = [{ id: "per_2", sessionID: "ses_remote", permission: "bash", patterns: ["make"], metadata: {}, always: [] }];
  w.fake.on("GET /permission", () => Response.json(asked));
  expect(await on(create)).toEqual({ id: "ses_remote" });
  expect(await on(prompt)).toBeNull();
  expect(await on({ kind: "session.messages", sessionID: "ses_remote" })).toEqual([{ info: { id: "m1", role: "assistant" }, parts: [] }]);
  await on({ kind: "session.messages", sessionID: "ses_remote", limit: 4 }); // a polled task's progress: the newest 4
  expect(limits).toEqual(["null in /repo/on/w1", "4 in /repo/on/w1"]);
  expect(await on({ kind: "session.status" })).toEqual({ ses_remote: { type: "busy" } });
  expect(await on({ kind: "session.get", sessionID: "ses_remote" })).toEqual({ id: "ses_remote", parentID: "ses_above" });
  const found = [{ id: "ses_remote", parentID: "ses_parent", metadata: { asyncagents: { task: "bg_1" } } }];
  expect(await on({ kind: "session.children", sessionID: "ses_parent" })).toEqual(found);
  expect(await on({ kind: "session.list", title: "50% t (@general subagent)" })).toEqual(found);
  expect(searched).toEqual(["50% t (@general subagent)"]);
  expect(await on(summarize)).toBeNull();
  expect(await on({ kind: "session.delete", sessionID: "ses_remote" })).toBeNull();
  expect(await on({ kind: "session.abort", sessionID: "ses_remote" })).toBeNull();
  expect(await on(permit)).toBeNull();
  expect(await on({ kind: "permission.list" })).toEqual(asked);
  const basic = `Basic ${Buffer.from(`opencode:${PW}`).toString("base64")}`;
  expect(w.fake.seen.every((s) => s.auth === basic && s.directory === "/repo/on/w1")).toBe(true);
  const json = (v: unknown) => JSON.parse(JSON.stringify(v));
  expect(w.fake.seen.map((s) => [s.method, s.path, s.body])).toEqual([
    ["POST", "/session", json(createBody(create as Effect))],
    ["POST", "/session/ses_remote/prompt_async", json(promptBody(prompt as Effect))],
    ["GET", "/session/ses_remote/message", undefined],
    ["GET", "/session/ses_remote/message", undefined],
    ["GET", "/session/status", undefined],
    ["GET", "/session/ses_remote", undefined],
    ["GET", "/session/ses_parent/children", undefined],
    ["GET", "/session", undefined],
    ["POST", "/session/ses_remote/summarize", json(summarizeBody(summarize as Effect))],
    ["DELETE", "/session/ses_remote", undefined],
    ["POST", "/session/ses_remote/abort", undefined],
    ["POST", "/permission/per_1/reply", json(permissionReplyBody(permit as Effect))],
    ["GET", "/permission", undefined],
  ]);
});

test("onWorkers sends an effect naming a worker to it, and every other effect on its local way", async () => {
  w.fake.on("POST /session", () => Response.json({ id: "ses_remote", time: { created: 1_700_000_000_123, updated: 1_700_000_000_123 } }));
  const local: string[] = [];
  const perform = onWorkers(async (e) => void local.push(e.kind), w.followers);
  await perform({ id: 1, kind: "session.create", parentID: "p" });
  expect(await perform({ id: 2, kind: "session.create", parentID: "p", worker: "w1", remote: w.remote() } as WorkerEffect)).toStrictEqual({ id: "ses_remote", created: 1_700_000_000_123 });
  // A remote task's pane is on this machine: its tmux effects stay here, worker or not.
  await perform({ id: 3, kind: "tmux.open", sessionID: "ses_remote", worker: "w1", remote: w.remote() } as WorkerEffect);
  expect(local).toEqual(["session.create", "tmux.open"]);
  expect(w.fake.seen.map((s) => s.path)).toEqual(["/session"]);
});

test("a wrong password: the worker named, 401 said, the password nowhere", async () => {
  w.fake.password = "another";
  expect(await failure(on({ kind: "session.create", parentID: "p" }))).toBe("worker w1: creating the session: wrong username or password (401)");
  expect(await failure(on({ kind: "worker.health" }))).toBe("wrong username or password (401)");
});

test("an unset password variable fails before any request, naming the variable", async () => {
  delete process.env.AA_TEST_W1_PASSWORD;
  expect(await failure(on({ kind: "session.status" }))).toBe("worker w1: reading session status: environment variable AA_TEST_W1_PASSWORD is not set");
  expect(await failure(on({ kind: "worker.health" }))).toBe("environment variable AA_TEST_W1_PASSWORD is not set");
  expect(w.fake.seen).toEqual([]);
});

test("OpenCode's own words come back with the status; an answer that echoes the password has it blanked", async () => {
  w.fake.on("POST /session/ses_gone/abort", () => Response.json({ name: "NotFoundError", data: { message: "Session not found: ses_gone" } }, { status: 404 }));
  w.fake.on("GET /session/status", (req) => new Response(`broken proxy saw ${req.headers.get("authorization")} and ${PW}`, { status: 502 }));
  expect(await failure(on({ kind: "session.abort", sessionID: "ses_gone" }))).toBe("worker w1: aborting the session: Session not found: ses_gone (404)");
  const echoed = await failure(on({ kind: "session.status" }));
  expect(echoed).toBe("worker w1: reading session status: broken proxy saw Basic *** and *** (502)");
});

test("worker.health replies {healthy, version, date}; a closed port is 'connection refused'; a silent one times out after 5 s", async () => {
  const date = "Sat, 28 Nov 2026 02:32:35 GMT"; // the worker's clock, as its Date header gives it
  w.fake.on("GET /global/health", () => Response.json({ healthy: true, version: "1.18.33" }, { headers: { date } }));
  expect(await on({ kind: "worker.health" })).toEqual({ healthy: true, version: "1.18.33", date: Date.UTC(2026, 10, 28, 2, 32, 35) });
  expect(w.fake.seen[0].directory).toBeNull();
  const closed = fakeWorker();
  closed.stop();
  expect(await failure(performOnWorker({ id: 1, kind: "worker.health", worker: "w1", remote: { ...w.remote(), url: closed.url } } as WorkerEffect, w.followers))).toBe("connection refused");
  w.fake.on("GET /global/health", () => new Promise<Response>(() => {}));
  const started = performance.now();
  expect(await failure(on({ kind: "worker.health" }))).toBe("timed out after 5 s");
  expect(performance.now() - started).toBeGreaterThanOrEqual(4_900);
}, 15_000);

test("an effect without its remote, or one no worker carries out, fails naming the worker", async () => {
  expect(await failure(performOnWorker({ id: 1, kind: "session.status", worker: "w1" } as WorkerEffect, w.followers))).toBe("worker w1: session.status: the effect says nowhere how to reach the worker");
  expect(await failure(on({ kind: "tmux.open" }))).toBe("worker w1: this plugin cannot carry out effect tmux.open on a worker");
});
