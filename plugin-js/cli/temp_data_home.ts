// The CLI tests' data home: a temporary XDG_DATA_HOME for one test file, and the projects' folders
// it makes, all removed when the file's tests end, the variable given back its value, so that no
// run leaves folders in the system's temporary folder.
import { afterAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Points XDG_DATA_HOME at a new temporary folder (its name begins with prefix) until the calling
 * test file ends; returns the maker of the file's other temporary folders, which go with it.
 */
export function tempDataHome(prefix: string): (prefix: string) => string {
  const saved = process.env.XDG_DATA_HOME;
  const dirs: string[] = [];
  const tempDir = (prefix: string) => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };
  process.env.XDG_DATA_HOME = tempDir(prefix);
  afterAll(() => {
    if (saved === undefined) delete process.env.XDG_DATA_HOME;
    else process.env.XDG_DATA_HOME = saved;
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return tempDir;
}
