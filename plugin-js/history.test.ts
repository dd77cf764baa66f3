import { expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { historyDir } from "./history";

const text = (b: Uint8Array) => new TextDecoder().decode(b);

// Following another process's log: what it gained since the last look, complete lines only; all
// of it again when a compaction renamed a new file over it; empty and replaced once it is gone.
test("readSince reads what a log gained, whole after a replace, empty once it is gone", () => {
  const root = mkdtempSync(join(tmpdir(), "aa-hist-"));
  try {
    const dir = historyDir(root);
    expect(dir.readSince("h.log")).toBeUndefined();
    writeFileSync(join(root, "h.log"), "a\nb\npart");
    let got = dir.readSince("h.log")!;
    expect([text(got.lines), got.replace]).toEqual(["a\nb\n", true]);
    expect(dir.readSince("h.log")).toBeUndefined();
    appendFileSync(join(root, "h.log"), "ial\nc\n");
    got = dir.readSince("h.log")!;
    expect([text(got.lines), got.replace]).toEqual(["partial\nc\n", false]);
    writeFileSync(join(root, "h.log.tmp"), "c\n");
    renameSync(join(root, "h.log.tmp"), join(root, "h.log"));
    got = dir.readSince("h.log")!;
    expect([text(got.lines), got.replace]).toEqual(["c\n", true]);
    expect(dir.rename("h.log", "g.log")).toBe(true);
    expect(dir.rename("h.log", "g.log")).toBe(false);
    got = dir.readSince("h.log")!;
    expect([text(got.lines), got.replace]).toEqual(["", true]);
    expect(dir.readSince("h.log")).toBeUndefined();
    dir.forget();
    got = dir.readSince("g.log")!;
    expect([text(got.lines), got.replace]).toEqual(["c\n", true]);
    expect(dir.list().sort()).toEqual(["g.log"]);
    dir.remove("g.log");
    dir.remove("g.log");
    expect(dir.list()).toEqual([]);
    expect(historyDir(join(root, "none")).list()).toEqual([]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
