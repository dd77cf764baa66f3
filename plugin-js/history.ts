// The task history file: the plugin appends the lines the core formats and reads the file back at
// start. Synchronous writes on purpose: the core puts a step's history effects first, and a line
// must be on disk before the notice or tool answer that follows it (OpenCode runs no plugin
// cleanup on SIGTERM, so nothing can be left for later).

import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
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
}

export function fileHistory(path: string, indexPath: string): History {
  let dirReady = false;
  const ensureDir = () => {
    if (!dirReady) mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    dirReady = true;
  };
  return {
    files: { history: path, index: indexPath },
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

/** A history that keeps nothing, for tests of the runtime alone. */
export const noHistory: History = { read: () => "", readIndex: () => "", append: () => {}, rewrite: () => {}, writeIndex: () => {} };

/** Reads a state file (the model health, at the path the core names); missing is "". */
export function readState(path: string): string {
  return existsSync(path) ? readFileSync(path, "utf8") : "";
}

/** Replaces a state file whole: a temporary file renamed over it, so a crash leaves the old one. */
export function writeState(dir: string, name: string, content: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  replaceFile(join(dir, basename(name)), content);
}
