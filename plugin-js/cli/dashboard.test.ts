// The npm CLI's `asyncagents dashboard --print` takes the server the core picks: with a read-only
// `asyncagents serve` and the plugin both running, the plugin's, and says so on stderr, as the Go
// CLI does; with none, the core's words.
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { procStat } from "../histories";
import { dashboard } from "./dashboard";
import { openProject, type Flags } from "./project";
import { tempDataHome } from "./temp_data_home";

const wasm = resolve(import.meta.dir, "../../dist/asyncagents.wasm");
const tempDir = tempDataHome("aa-cli-dash-");
// A second live process stands for the OpenCode that runs the plugin; this one stands for serve.
const other = Bun.spawn(["sleep", "60"]);
afterAll(() => other.kill());

async function run(project: string): Promise<{ out: string; err: string; error?: string }> {
  let out = "";
  let err = "";
  try {
    await dashboard({ print: true, wasm, project } as Flags, (s) => (out += s), (s) => (err += s));
    return { out, err };
  } catch (e) {
    return { out, err, error: (e as Error).message };
  }
}

test("the plugin's live server over serve's read-only one, whichever started last; none is the core's error", async () => {
  const project = tempDir("aa-cli-dash-p-");
  expect((await run(project)).error).toBe(`no running asyncagents server for ${project}: start OpenCode there, or run \`asyncagents serve --project ${project}\``);
  const { core, storage } = await openProject({ project, wasm, print: false } as Flags);
  mkdirSync(storage.serverDir, { recursive: true });
  const write = (pid: number, port: number, readOnly: boolean, startedAt: string, stat?: string) => {
    const server = { port, pid, startedAt, url: `http://127.0.0.1:${port}`, token: "t", auth: "none", readOnly };
    const content = core.call({ op: "server.file", server, ...(stat ? { procStat: stat } : {}) }).serverFile!;
    writeFileSync(join(storage.serverDir, `${pid}.json`), content);
  };
  write(other.pid, 5999, false, "2026-11-27T10:00:00.000Z");
  write(process.pid, 5998, true, "2026-11-27T11:00:00.000Z", procStat());
  const r = await run(project);
  expect(r.error).toBeUndefined();
  expect(r.out).toBe("http://127.0.0.1:5999/\n");
  expect(r.err).toBe(`the plugin's live server in OpenCode (pid ${other.pid})\n`);
});

test("a server that asks a token and gives no code is the core's error, naming it", async () => {
  const project = tempDir("aa-cli-dash-c-");
  const { core, storage } = await openProject({ project, wasm, print: false } as Flags);
  mkdirSync(storage.serverDir, { recursive: true });
  // A server that answers the code request with a refusal, as one whose token changed would.
  const refusing = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("unauthorized\n", { status: 401 }) });
  try {
    const server = { port: refusing.port, pid: other.pid, startedAt: "2026-11-27T10:00:00.000Z", url: refusing.url.origin, token: "t" };
    writeFileSync(join(storage.serverDir, `${other.pid}.json`), core.call({ op: "server.file", server }).serverFile!);
    const r = await run(project);
    expect(r.error).toBe(`the server at http://127.0.0.1:${refusing.port} did not give a dashboard link: 401 unauthorized`);
    expect(r.out).toBe("");
  } finally {
    refusing.stop(true);
  }
});
