import { afterEach, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LookSchedule, ownFile } from "./history_watch";
import { until } from "./fake_worker";

const made: string[] = [];
const schedules: LookSchedule[] = [];
afterEach(() => {
  for (const s of schedules.splice(0)) s.stop();
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

function folder(): string {
  const d = mkdtempSync(join(tmpdir(), "aa-look-"));
  made.push(d);
  return d;
}

// The timed look is a minute away in these tests: a look that comes sooner was started by the watch.
const timing = { ms: 50, watchedMs: 60_000 };

test("a change another process makes to the folder starts a look; this process's own writes do not", async () => {
  const dir = folder();
  const own = join(dir, "history-k.1-2.log");
  let looks = 0;
  const seen: [string, boolean][] = [];
  const s = new LookSchedule(dir, (name) => ownFile(name, own, join(dir, "history-k.1-2.idx")), () => looks++, timing, (name, counted) => seen.push([name, counted]));
  schedules.push(s);
  expect(s.watching).toBe(true);
  appendFileSync(own, "own line\n");
  await until("the watch reports the own write", () => seen.some(([n]) => n === "history-k.1-2.log"), 5_000);
  expect(seen.every(([, counted]) => !counted)).toBe(true);
  expect(looks).toBe(0); // a look it started would have run by now: it is due at once
  appendFileSync(join(dir, "history-k.3-4.log"), "another process's line\n");
  await until("a look", () => looks > 0, 5_000);
});

test("a folder that does not exist yet is looked at on a timer, and watched once it exists", async () => {
  const dir = join(folder(), "history");
  let looks = 0;
  const s = new LookSchedule(dir, () => false, () => looks++, timing);
  schedules.push(s);
  expect(s.watching).toBe(false);
  await until("timed looks", () => looks >= 2, 5_000);
  mkdirSync(dir);
  await until("the folder watched", () => s.watching, 5_000);
  const before = looks;
  appendFileSync(join(dir, "history-k.3-4.log"), "line\n");
  await until("a look from the watch", () => looks > before, 5_000);
});

test("looks started by changes come at most one per interval", async () => {
  const dir = folder();
  const stamps: number[] = [];
  const s = new LookSchedule(dir, () => false, () => stamps.push(performance.now()), { ms: 300, watchedMs: 60_000 });
  schedules.push(s);
  for (let i = 0; i < 20; i++) appendFileSync(join(dir, "other.log"), `${i}\n`);
  await until("a look", () => stamps.length >= 1, 5_000);
  appendFileSync(join(dir, "other.log"), "later\n");
  await until("a second look", () => stamps.length >= 2, 5_000);
  expect(stamps[1] - stamps[0]).toBeGreaterThanOrEqual(290);
});

test("own files: the log, its index and what is written over them; not another process's log", () => {
  const log = "/d/history-k.1-2.log";
  const idx = "/d/history-k.1-2.idx";
  expect(ownFile("history-k.1-2.log", log, idx)).toBe(true);
  expect(ownFile("history-k.1-2.idx", log, idx)).toBe(true);
  expect(ownFile("history-k.1-2.log.99.tmp", log, idx)).toBe(true);
  expect(ownFile("history-k.3-4.log", log, idx)).toBe(false);
  expect(ownFile("history-k.1-22.log", log, idx)).toBe(false);
});
