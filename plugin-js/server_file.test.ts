// This process's server file: written atomically (mode 0600), over a stale file of a process that
// had its pid before, and removed only while it still holds what this process wrote.
import { afterEach, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compile } from "../bridge/core";
import { noHistory } from "./history";
import { Runtime } from "./runtime";
import { removeOwnFile, writeOwnFile } from "./server";

const module = compile(readFileSync(join(import.meta.dir, "..", "dist", "asyncagents.wasm")));

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "aa-serverfile-"));
  dirs.push(dir);
  return dir;
}

test("the server file is written atomically with mode 0600, over a stale one", () => {
  const dir = join(tempDir(), "servers-x");
  mkdirSync(dir);
  const path = join(dir, `${process.pid}.json`);
  writeFileSync(path, "a stale file of this pid's last owner", { mode: 0o644 });
  writeOwnFile({ path, content: "mine\n" });
  expect(readFileSync(path, "utf8")).toBe("mine\n");
  expect(statSync(path).mode & 0o777).toBe(0o600);
  expect(readdirSync(dir)).toEqual([`${process.pid}.json`]); // no temporary file left
});

test("only the owner removes its file: the same pid with another start time is not it", async () => {
  const rt = new Runtime(module, {}, async () => null, () => {}, { env: { home: "/nonexistent" }, open: () => noHistory });
  await rt.whenReady();
  const server = { port: 5165, pid: process.pid, startedAt: new Date(0).toISOString(), url: "http://127.0.0.1:5165", token: "t" };
  const mine = JSON.parse(rt.serverFile(server));
  expect(mine.pid).toBe(process.pid);
  // Its start time where the OS tells it (Linux's /proc), none elsewhere: asserted either way.
  expect(mine.procStart).toEqual(existsSync("/proc/self/stat") ? expect.stringMatching(/^\d+$/) : undefined);
  // Another process that had this pid: the same fields, another start time.
  const theirs = rt.serverFile({ ...server, procStart: "1" });
  const path = join(tempDir(), `${process.pid}.json`);
  const own = { path, content: rt.serverFile(server) };
  writeOwnFile({ path, content: theirs });
  removeOwnFile(own);
  expect(readFileSync(path, "utf8")).toBe(theirs);
  writeOwnFile(own);
  removeOwnFile(own);
  expect(existsSync(path)).toBe(false);
  rt.dispose();
});
