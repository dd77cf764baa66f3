// Reads the config files the core named (asyncagents.json / .jsonc, global and per project). What
// they mean, and whether they are valid, is the core's call (core/config/file.go): this only reads.

import { readFileSync } from "node:fs";
import type { ConfigFile } from "../bridge/core";

/** Reads the candidates that exist, in order. One that exists but cannot be read is passed with its error. */
export function readConfigFiles(paths: string[]): ConfigFile[] {
  const files: ConfigFile[] = [];
  for (const path of paths) {
    try {
      files.push({ path, text: readFileSync(path, "utf8") });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") continue;
      files.push({ path, text: "", error: (err as Error).message });
    }
  }
  return files;
}
