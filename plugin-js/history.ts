// The task history file: the plugin appends the lines the core formats and reads the file back at
// start. Synchronous writes on purpose: the core puts a step's history effects first, and a line
// must be on disk before the notice or tool answer that follows it (OpenCode runs no plugin
// cleanup on SIGTERM, so nothing can be left for later).

import {
  appendFileSync,
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";

export interface History {
  /** The whole log: the file's bytes (they go to the core as they are), or text. */
  read(): string | Uint8Array;
  /** The log's index, as the core last wrote it ("" if none): the core checks it fits the log. */
  readIndex(): string | Uint8Array;
  append(line: string): void;
  rewrite(content: string): void;
  /** Replaces the index whole, as rewrite the log. */
  writeIndex(content: string): void;
  /** The files, when the history is kept in files: the core's bridge reads them itself. */
  files?: { history: string; index: string };
  /** The storage directory, where the project's other processes keep their logs (below). */
  dir?: HistoryDir;
}

/**
 * The logs of a project's other processes, next to this one's (core/history_files.go): the core
 * names them; this reads, renames and removes them as it says.
 */
export interface HistoryDir {
  /** The names in the storage directory ([] when it does not exist). */
  list(): string[];
  /** Renames from to to; false when from is gone (another process took it first). */
  rename(from: string, to: string): boolean;
  remove(name: string): void;
  /** A log whole ("" when missing). */
  read(name: string): Uint8Array | "";
  /**
   * What the log name gained since the last look (complete lines only), or, when it was replaced
   * (a compaction renames a new file over it) or is new, all of it with replace; undefined when
   * nothing changed. A missing log reads as replaced and empty.
   */
  readSince(name: string): { lines: Uint8Array; replace: boolean } | undefined;
  /** Forgets where each log was read to: the next look reads each whole. */
  forget(): void;
}

export function fileHistory(path: string, indexPath: string): History {
  let dirReady = false;
  const ensureDir = () => {
    if (!dirReady) mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    dirReady = true;
  };
  return {
    files: { history: path, index: indexPath },
    dir: historyDir(dirname(path)),
    read: () => (existsSync(path) ? readFileSync(path) : ""),
    append: (line) => {
      ensureDir();
      appendFileSync(path, line, { mode: 0o600 });
    },
    rewrite: (content) => {
      ensureDir();
      replaceFile(path, content);
    },
    readIndex: () => (existsSync(indexPath) ? readFileSync(indexPath) : ""),
    writeIndex: (content) => {
      ensureDir();
      replaceFile(indexPath, content);
    },
  };
}

/** Writes a temporary file and renames it over path: a crash leaves the old file or the new. */
function replaceFile(path: string, content: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, content, { mode: 0o600 });
  renameSync(tmp, path);
}

/** The storage directory dir as a HistoryDir. */
export function historyDir(dir: string): HistoryDir {
  const seen = new Map<string, { ino: number; dev: number; offset: number }>();
  const at = (name: string) => join(dir, basename(name));
  return {
    list: () => {
      try {
        return readdirSync(dir);
      } catch {
        return [];
      }
    },
    rename: (from, to) => {
      try {
        renameSync(at(from), at(to));
        return true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
        throw err;
      }
    },
    remove: (name) => {
      try {
        unlinkSync(at(name));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      }
    },
    read: (name) => (existsSync(at(name)) ? readFileSync(at(name)) : ""),
    readSince: (name) => {
      let fd: number;
      try {
        fd = openSync(at(name), "r");
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
        if (!seen.delete(name)) return undefined;
        return { lines: new Uint8Array(0), replace: true };
      }
      try {
        const st = fstatSync(fd);
        const last = seen.get(name);
        const replace = !last || last.ino !== st.ino || last.dev !== st.dev || st.size < last.offset;
        const from = replace ? 0 : last!.offset;
        if (!replace && st.size === from) return undefined;
        const buf = new Uint8Array(st.size - from);
        let got = 0;
        while (got < buf.length) {
          const n = readSync(fd, buf, got, buf.length - got, from + got);
          if (n <= 0) break;
          got += n;
        }
        // A line still being written waits for the next look.
        let end = got;
        while (end > 0 && buf[end - 1] !== 10) end--;
        seen.set(name, { ino: st.ino, dev: st.dev, offset: from + end });
        if (!replace && end === 0) return undefined;
        return { lines: buf.subarray(0, end), replace };
      } finally {
        closeSync(fd);
      }
    },
    forget: () => seen.clear(),
  };
}

/** A history that keeps nothing, for tests of the runtime alone. */
export const noHistory: History = { read: () => "", readIndex: () => "", append: () => {}, rewrite: () => {}, writeIndex: () => {} };

/** Reads a state file (the model health, at the path the core names); missing is "". */
export function readState(path: string): string {
  return existsSync(path) ? readFileSync(path, "utf8") : "";
}

/**
 * Replaces a state file whole (a temporary file renamed over it, so a crash leaves the old one)
 * with what merge makes of it as it is now: the model health is every process's file, and the
 * core merges what another process wrote since into what it writes (the state.merge op).
 */
export function writeMergedState(dir: string, name: string, merge: (now: string) => string): void {
  const path = join(dir, basename(name));
  const content = merge(readState(path));
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  replaceFile(path, content);
}
