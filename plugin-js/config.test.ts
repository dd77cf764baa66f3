// The config files through the real core: the Runtime reads the candidates the storage op names,
// a bad file is logged and makes asyncagents_task fail with the file and the field, a good one
// is layered over the plugin options.
import { afterEach, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compile } from "../bridge/core";
import { noHistory } from "./history";
import { Runtime } from "./runtime";
import { readConfigFiles } from "./config";
import { fakeOpenCode } from "./fake_opencode";

const module = compile(readFileSync(join(import.meta.dir, "..", "dist", "asyncagents.wasm")));
const ctx = { sessionID: "ses_parent", messageID: "msg_1", agent: "build" };
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A home (with its config dir) and a project, in a fresh temporary directory. */
function place() {
  const root = mkdtempSync(join(tmpdir(), "asyncagents-config-"));
  dirs.push(root);
  const home = join(root, "home");
  const project = join(root, "project");
  mkdirSync(join(home, ".config", "opencode"), { recursive: true });
  mkdirSync(join(project, ".opencode"), { recursive: true });
  return { root, home, project };
}


test("a bad project file is logged, and asyncagents_task fails naming the file and the field", async () => {
  const { home, project } = place();
  const file = join(project, ".opencode", "asyncagents.json");
  writeFileSync(file, `{\n  "agents": { "general": { "models": ["mock/a", 42] } }\n}\n`);
  const logs: [string, string][] = [];
  const oc = fakeOpenCode();
  const rt = new Runtime(module, { maxDepth: 4 }, oc.perform, (level, message) => logs.push([level, message]), {
    env: { home, directory: project },
    open: () => noHistory,
  });
  await rt.whenReady();
  const want = `asyncagents: ${file}: agents.general.models[1]: must be a "provider/model" string, got 42`;
  expect(rt.configError).toBe(want);
  expect(logs).toContainEqual(["error", want]);
  expect(rt.config?.maxDepth).toBe(4); // the plugin options alone

  const before = oc.performed.length; // the start-up agent prefetch
  await expect(rt.callTool("asyncagents_task", { description: "Job", prompt: "p", agent: "general" }, { ...ctx, callID: "t1" })).rejects.toThrow(want);
  expect(oc.performed.length).toBe(before); // nothing launched

  const list = await rt.callTool("asyncagents_list", {}, { ...ctx, callID: "t2" });
  expect(list.output).toContain("No background tasks found"); // the other tools work
  rt.dispose();
});

test("a good global .jsonc and project .json are layered over the options, and the chain is used", async () => {
  const { root, home, project } = place();
  const xdg = join(root, "xdg");
  mkdirSync(join(xdg, "opencode"), { recursive: true });
  // $XDG_CONFIG_HOME wins over ~/.config: this one must be ignored.
  writeFileSync(join(home, ".config", "opencode", "asyncagents.json"), `{"maxDepth": "ignored"}`);
  writeFileSync(
    join(xdg, "opencode", "asyncagents.jsonc"),
    `// global\n{\n  "maxDepth": 5,\n  "maxConcurrentStarts": 2,\n  "agents": { "general": { "models": ["mock/a", "mock/b"], }, },\n}\n`,
  );
  writeFileSync(join(project, ".opencode", "asyncagents.json"), `{"maxDepth": 3}`);
  const logs: [string, string][] = [];
  const oc = fakeOpenCode();
  const rt = new Runtime(module, { maxDepth: 4, maxResultChars: 50 }, oc.perform, (level, message) => logs.push([level, message]), {
    env: { home, xdgConfigHome: xdg, directory: project },
    open: () => noHistory,
  });
  await rt.whenReady();
  expect(rt.configError).toBeUndefined();
  expect(logs.filter(([level]) => level === "error")).toEqual([]);
  expect(rt.storagePaths?.configFiles).toEqual([
    join(xdg, "opencode", "asyncagents.json"),
    join(xdg, "opencode", "asyncagents.jsonc"),
    join(project, ".opencode", "asyncagents.json"),
    join(project, ".opencode", "asyncagents.jsonc"),
  ]);
  expect(rt.config?.maxDepth).toBe(3); // project over global over options
  expect(rt.config?.maxConcurrentStarts).toBe(2);
  expect(rt.config?.maxResultChars).toBe(50);
  expect(rt.config?.agents).toEqual({ general: { models: ["mock/a", "mock/b"] } });

  const answer = await rt.callTool("asyncagents_task", { description: "Job", prompt: "p", agent: "general" }, { ...ctx, callID: "t3" });
  expect(answer.output.split("\n")[0]).toMatch(/^task_id: bg_/);
  // The child session is created, and prompted, after the answer.
  for (let i = 0; i < 100 && !oc.performed.some((e) => e.kind === "session.promptAsync"); i++) await Bun.sleep(10);
  const prompt = oc.performed.find((e) => e.kind === "session.promptAsync" && e.sessionID === "ses_child");
  expect(prompt?.model).toBe("mock/a");
  rt.dispose();
});

test("a candidate that exists but cannot be read is reported, absent ones are skipped", () => {
  const { project } = place();
  const dir = join(project, ".opencode", "asyncagents.jsonc");
  mkdirSync(dir); // a directory where the file should be
  const files = readConfigFiles([join(project, "nope", "asyncagents.json"), join(project, ".opencode", "asyncagents.json"), dir]);
  expect(files.length).toBe(1);
  expect(files[0].path).toBe(dir);
  expect(files[0].error).toContain("EISDIR");
});
