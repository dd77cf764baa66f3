import { expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { historyDir } from "./history";

const text = (b: Uint8Array) => new TextDecoder().decode(b);

// Following another process's log: the host opens it for a look, gives the core its stat, and
// reads from where the core says (core/follow_look.go decides); a file renamed over the log is
// another file; a log gone is none.
test("a log opened for a look gives its stat and its bytes from an offset, from the one file", () => {
  const root = mkdtempSync(join(tmpdir(), "aa-hist-"));
  try {
    const dir = historyDir(root);
    expect(dir.open("h.log")).toBeUndefined();
    writeFileSync(join(root, "h.log"), "a\nb\npart");
    const first = dir.open("h.log")!;
    expect(first.stat.size).toBe(8);
    expect(first.stat.ino).toBeGreaterThan(0);
    // A compaction renames a new file over the log while it is open: this look reads the file it
    // opened, and the next look sees another one.
    writeFileSync(join(root, "h.log.tmp"), "c\n");
    renameSync(join(root, "h.log.tmp"), join(root, "h.log"));
    expect(text(first.read(4))).toBe("part");
    expect(text(first.read(0))).toBe("a\nb\npart");
    first.close();
    const second = dir.open("h.log")!;
    expect(second.stat.ino).not.toBe(first.stat.ino);
    appendFileSync(join(root, "h.log"), "d\n"); // grown since its stat: read to its end
    expect(text(second.read(2))).toBe("d\n");
    second.close();
    expect(dir.rename("h.log", "g.log")).toBe(true);
    expect(dir.rename("h.log", "g.log")).toBe(false);
    expect(dir.open("h.log")).toBeUndefined();
    expect(dir.list().sort()).toEqual(["g.log"]);
    dir.remove("g.log");
    dir.remove("g.log");
    expect(dir.list()).toEqual([]);
    expect(historyDir(join(root, "none")).list()).toEqual([]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
