// Recomputes reference.json: the real BPE token counts (gpt-tokenizer, o200k_base and cl100k_base)
// of every corpus file (*.txt) in this directory. core/forkctx/tokens_test.go checks EstimateTokens
// against them; plugin-js/tokens.test.ts checks that this file's output is current.
//
//   node_modules/.bin/bun core/forkctx/testdata/tokens/reference.ts          # rewrite reference.json
//   node_modules/.bin/bun core/forkctx/testdata/tokens/reference.ts --check  # exit 1 if it is stale
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { encode as encodeO200k } from "gpt-tokenizer/encoding/o200k_base";
import { encode as encodeCl100k } from "gpt-tokenizer/encoding/cl100k_base";

export type Reference = Record<string, { o200k: number; cl100k: number }>;

export const corpusDir = import.meta.dir;
export const referencePath = join(corpusDir, "reference.json");

// Special-token strings such as "<|endoftext|>" are counted as ordinary text.
const plain = { disallowedSpecial: new Set<string>() };

export function computeReference(dir: string = corpusDir): Reference {
  const ref: Reference = {};
  for (const name of readdirSync(dir).filter((n) => n.endsWith(".txt")).sort()) {
    const text = readFileSync(join(dir, name), "utf8");
    ref[name] = { o200k: encodeO200k(text, plain).length, cl100k: encodeCl100k(text, plain).length };
  }
  return ref;
}

export function formatReference(ref: Reference): string {
  return JSON.stringify(ref, null, 2) + "\n";
}

if (import.meta.main) {
  const text = formatReference(computeReference());
  if (process.argv.includes("--check")) {
    if (readFileSync(referencePath, "utf8") !== text) {
      console.error("reference.json is stale: run node_modules/.bin/bun core/forkctx/testdata/tokens/reference.ts");
      process.exit(1);
    }
  } else {
    writeFileSync(referencePath, text);
  }
  console.log(text);
}
