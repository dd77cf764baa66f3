// The npm CLI's `asyncagents workers`: it finds the project's live server by its server file, asks
// GET /v1/workers with the file's token, and prints the core's table (or the answer, --json); with
// no server it says none runs. The server here is a fake with the status API's answer.
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { procStat } from "../histories";
import { openProject, type Flags } from "./project";
import { tempDataHome } from "./temp_data_home";
import { workers } from "./workers";

const wasm = resolve(import.meta.dir, "../../dist/asyncagents.wasm");
const tempDir = tempDataHome("aa-cli-data-");

const answer = {
  workers: [
    { name: "w1", url: "https://w1.example:4096", state: "up", version: "1.18.33", running: 1, queued: 0, maxTasks: 4, lastChangeAt: Date.now() - 5_000 },
    { name: "w2", url: "http://127.0.0.1:4097", state: "down", error: "wrong username or password (401)", running: 0, queued: 2, maxTasks: 2 },
  ],
};
const seen: (string | null)[] = [];
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(req) {
    seen.push(req.headers.get("authorization"));
    if (new URL(req.url).pathname !== "/v1/workers") return new Response("not found", { status: 404 });
    if (req.headers.get("authorization") !== "Bearer tok") return Response.json({ error: "unauthorized" }, { status: 401 });
    return Response.json(answer);
  },
});
afterAll(() => server.stop(true));

async function cli(flags: Partial<Flags>): Promise<{ out: string; err: string; error?: string }> {
  let out = "";
  let err = "";
  try {
    await workers({ print: false, wasm, project: "", ...flags } as Flags, (s) => (out += s), (s) => (err += s));
    return { out, err };
  } catch (e) {
    return { out, err, error: (e as Error).message };
  }
}

/** Writes this process's server file for project, pointing at the fake, as the plugin writes its own. */
async function serverFile(project: string, token: string) {
  const { core, storage } = await openProject({ project, wasm, print: false });
  const port = server.port!;
  const content = core.call({ op: "server.file", server: { port, pid: process.pid, startedAt: new Date().toISOString(), url: `http://127.0.0.1:${port}`, token }, procStat: procStat() }).serverFile!;
  mkdirSync(storage.serverDir, { recursive: true });
  writeFileSync(join(storage.serverDir, `${process.pid}.json`), content);
}

test("with no server running for the project, it says so and prints nothing", async () => {
  const project = tempDir("aa-cli-none-");
  const r = await cli({ project });
  expect(r.out).toBe("");
  expect(r.error).toContain("no running asyncagents server for");
});

test("the core's table of the live server's workers, --json its answer, a refused token named", async () => {
  const project = tempDir("aa-cli-live-");
  await serverFile(project, "tok");
  const r = await cli({ project });
  expect(r.error).toBeUndefined();
  expect(r.err).toBe(""); // the plugin's own server needs no word; a read-only serve's is named
  expect(r.out).toMatch(/^NAME +URL +RUNNING +QUEUED +VERSION +HEALTH$/m);
  expect(r.out).toMatch(/^w1 +https:\/\/w1\.example:4096 +1\/4 +0 +1\.18\.33 +up for \d/m);
  expect(r.out).toMatch(/^w2 +http:\/\/127\.0\.0\.1:4097 +0\/2 +2 +- +down: wrong username or password \(401\)$/m);
  expect(seen.at(-1)).toBe("Bearer tok");

  const j = await cli({ project, json: true });
  expect(JSON.parse(j.out)).toEqual(answer);

  await serverFile(project, "stale");
  const refused = await cli({ project });
  expect(refused.out).toBe("");
  expect(refused.error).toBe(`the server at http://127.0.0.1:${server.port} did not list its workers: 401 {"error":"unauthorized"}`);
});
