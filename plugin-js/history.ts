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
import type { FileStat } from "../bridge/types";

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
   * The log name, opened for a look (undefined when missing): its stat, which the core's
   * follow.look takes to say what to read, and its bytes from there. One open file for both, so
   * a compaction renaming a new file over the log between them cannot mix the two. Close it.
   */
  open(name: string): LogFile | undefined;
}

/** A log opened for a look (HistoryDir.open). */
export interface LogFile {
  stat: FileStat;
  /** Its bytes from byte from to its end. */
  read(from: number): Uint8Array;
  close(): void;
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
  try {
    writeFileSync(tmp, content, { mode: 0o600 });
    renameSync(tmp, path);
  } catch (err) {
    // A full disk: the part written would keep the space the next try needs.
    try {
      unlinkSync(tmp);
    } catch {}
    throw err;
  }
}

/** The bytes of the open file fd from byte from to its end (it may have grown since its stat). */
function readRest(fd: number, from: number): Uint8Array {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (let at = from; ; ) {
    const buf = new Uint8Array(Math.max(fstatSync(fd).size - at, 0) + 4096);
    const n = readSync(fd, buf, 0, buf.length, at);
    if (n <= 0) break;
    chunks.push(buf.subarray(0, n));
    total += n;
    at += n;
  }
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(total);
  chunks.reduce((at, c) => (out.set(c, at), at + c.length), 0);
  return out;
}

/** The storage directory dir as a HistoryDir. */
export function historyDir(dir: string): HistoryDir {
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
    open: (name) => {
      let fd: number;
      try {
        fd = openSync(at(name), "r");
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
        throw err;
      }
      try {
        const st = fstatSync(fd);
        return {
          stat: { dev: st.dev, ino: st.ino, size: st.size },
          read: (from) => readRest(fd, from),
          close: () => closeSync(fd),
        };
      } catch (err) {
        closeSync(fd);
        throw err;
      }
    },
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
